package dev.recount.stream.types;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * Nullable strings on the wire, exact for any Java string: NUL, unpaired surrogates, any code unit. A string whose
 * code units are all below 0x80 (every valid id and topic name) is one byte per unit; any other is written as its
 * UTF-16 code units, two bytes each — never through UTF-8 or modified UTF-8, which cannot hold an unpaired
 * surrogate and changes NUL.
 *
 * <p>Header, a variable-length unsigned int: 0 = null, else {@code (length << 1 | wide) + 1}.
 *
 * <p>Holds a scratch buffer, so one instance per serializer instance (serializers are duplicated per thread).
 */
public final class CompactStrings {
    /** Lengths above this are refused on read: no field of ours comes near it, a corrupt header could. */
    static final int MAX_LENGTH = 1 << 28;

    private byte[] scratch = new byte[64];

    public void write(String s, DataOutputView out) throws IOException {
        if (s == null) {
            out.writeByte(0);
            return;
        }
        int n = s.length();
        if (n > MAX_LENGTH) throw new IOException("string too long to serialize: " + n + " chars");
        byte[] b = scratch(2 * n);
        boolean wide = false;
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c >= 0x80) {
                wide = true;
                break;
            }
            b[i] = (byte) c;
        }
        writeVarInt(((n << 1) | (wide ? 1 : 0)) + 1, out);
        if (!wide) {
            out.write(b, 0, n);
            return;
        }
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            b[2 * i] = (byte) (c >>> 8);
            b[2 * i + 1] = (byte) c;
        }
        out.write(b, 0, 2 * n);
    }

    public String read(DataInputView in) throws IOException {
        int header = readVarInt(in);
        if (header == 0) return null;
        int n = (header - 1) >>> 1;
        if (n > MAX_LENGTH) throw new IOException("corrupt string header: length " + n);
        boolean wide = ((header - 1) & 1) != 0;
        if (!wide) {
            byte[] b = scratch(n);
            in.readFully(b, 0, n);
            return new String(b, 0, n, StandardCharsets.ISO_8859_1);
        }
        byte[] b = scratch(2 * n);
        in.readFully(b, 0, 2 * n);
        char[] chars = new char[n];
        for (int i = 0; i < n; i++) chars[i] = (char) (((b[2 * i] & 0xff) << 8) | (b[2 * i + 1] & 0xff));
        return new String(chars);
    }

    /** Copies one string's bytes from {@code in} to {@code out} without building the string. */
    public void copy(DataInputView in, DataOutputView out) throws IOException {
        int header = readVarInt(in);
        writeVarInt(header, out);
        if (header == 0) return;
        int n = (header - 1) >>> 1;
        if (n > MAX_LENGTH) throw new IOException("corrupt string header: length " + n);
        int bytes = ((header - 1) & 1) != 0 ? 2 * n : n;
        byte[] b = scratch(bytes);
        in.readFully(b, 0, bytes);
        out.write(b, 0, bytes);
    }

    private byte[] scratch(int size) {
        if (scratch.length < size) scratch = new byte[Math.max(size, 2 * scratch.length)];
        return scratch;
    }

    public static void writeVarInt(int v, DataOutputView out) throws IOException {
        while ((v & ~0x7f) != 0) {
            out.writeByte((v & 0x7f) | 0x80);
            v >>>= 7;
        }
        out.writeByte(v);
    }

    public static int readVarInt(DataInputView in) throws IOException {
        int v = 0;
        for (int shift = 0; shift < 35; shift += 7) {
            int b = in.readUnsignedByte();
            v |= (b & 0x7f) << shift;
            if ((b & 0x80) == 0) return v;
        }
        throw new IOException("corrupt variable-length int");
    }
}
