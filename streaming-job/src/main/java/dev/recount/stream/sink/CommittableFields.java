package dev.recount.stream.sink;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/** The field codecs the committable serializers of the PostgreSQL sinks share (their formats depend on these). */
final class CommittableFields {
    private CommittableFields() {}

    /** Length-prefixed UTF-8. Not writeUTF: its 64 KB limit would turn a long (valid) id into a job failure. */
    static void writeString(DataOutputSerializer out, String s) throws IOException {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        out.writeInt(bytes.length);
        out.write(bytes);
    }

    static String readString(DataInputDeserializer in) throws IOException {
        byte[] bytes = new byte[in.readInt()];
        in.readFully(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /** An exact spend: length-prefixed two's complement. */
    static void writeSpend(DataOutputSerializer out, BigInteger spend) throws IOException {
        byte[] twosComplement = spend.toByteArray();
        out.writeInt(twosComplement.length);
        out.write(twosComplement);
    }

    static BigInteger readSpend(DataInputDeserializer in) throws IOException {
        int length = in.readInt();
        if (length <= 0 || length > 64) throw new IOException("corrupt committable: a spend of " + length + " bytes");
        byte[] bytes = new byte[length];
        in.readFully(bytes);
        return new BigInteger(bytes);
    }
}
