package dev.recount.stream.sink;

import dev.recount.core.sets.MeasureValues;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.WindowRow;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * The field codecs the PostgreSQL sinks' committables and rows in flight share (their formats depend on these). Rows
 * are written without their set's definition: dimension values and measure values carry their own counts, so a
 * committable can be read (and its rows reported) whatever the definitions file says by then.
 */
final class CommittableFields {
    private CommittableFields() {}

    /** Length-prefixed UTF-8. Not writeUTF: its 64 KB limit would turn a long (valid) id into a job failure. */
    static void writeString(DataOutputView out, String s) throws IOException {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        out.writeInt(bytes.length);
        out.write(bytes);
    }

    static String readString(DataInputView in) throws IOException {
        int length = in.readInt();
        if (length < 0 || length > 1 << 24)
            throw new IOException("corrupt committable: a string of " + length + " bytes");
        byte[] bytes = new byte[length];
        in.readFully(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /** An exact integer (a spend, any measure): length-prefixed two's complement. */
    static void writeBig(DataOutputView out, BigInteger value) throws IOException {
        byte[] twosComplement = value.toByteArray();
        out.writeInt(twosComplement.length);
        out.write(twosComplement);
    }

    static BigInteger readBig(DataInputView in) throws IOException {
        int length = in.readInt();
        if (length <= 0 || length > 64) throw new IOException("corrupt committable: a number of " + length + " bytes");
        byte[] bytes = new byte[length];
        in.readFully(bytes);
        return new BigInteger(bytes);
    }

    /** Window start and end, the dimension values (count, then each), the measure values (count, then each). */
    static void writeWindowRow(DataOutputView out, WindowRow w) throws IOException {
        writeWindowAndKey(out, w.key(), w.windowEndMillis());
        MeasureValues values = w.values();
        out.writeInt(values.size());
        for (int i = 0; i < values.size(); i++) writeBig(out, values.get(i));
    }

    static WindowRow readWindowRow(DataInputView in) throws IOException {
        long start = in.readLong();
        long end = in.readLong();
        WindowKey key = readDimensions(in, start);
        int n = in.readInt();
        if (n < 1 || n > 4096) throw new IOException("corrupt committable: " + n + " measures");
        BigInteger[] values = new BigInteger[n];
        for (int i = 0; i < n; i++) values[i] = readBig(in);
        return new WindowRow(key, end, new MeasureValues(values));
    }

    /** Window start and end, then the dimension values. */
    static void writeWindowAndKey(DataOutputView out, WindowKey key, long windowEndMillis) throws IOException {
        out.writeLong(key.windowStartMillis());
        out.writeLong(windowEndMillis);
        out.writeInt(key.dimensions().size());
        for (String d : key.dimensions()) writeString(out, d);
    }

    static WindowKey readDimensions(DataInputView in, long windowStart) throws IOException {
        int n = in.readInt();
        if (n < 1 || n > 1024) throw new IOException("corrupt committable: " + n + " dimensions");
        String[] dims = new String[n];
        for (int i = 0; i < n; i++) dims[i] = readString(in);
        return WindowKey.of(windowStart, dims);
    }
}
