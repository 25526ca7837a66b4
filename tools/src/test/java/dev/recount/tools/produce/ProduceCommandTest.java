package dev.recount.tools.produce;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How produce splits a file into records and picks each record's key. */
class ProduceCommandTest {
    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void keyIsTheStringCampaignIdOfAJsonObject() {
        assertThat(ProduceCommand.keyOf(utf8("{\"event_id\":\"e1\",\"campaign_id\":\"c-42\",\"cost_micros\":5}")))
                .isEqualTo(utf8("c-42"));
        assertThat(ProduceCommand.keyOf(utf8("{\"campaign_id\":\"kampaň\"}"))).isEqualTo(utf8("kampaň"));
    }

    @Test
    void noKeyWithoutAStringCampaignId() {
        assertThat(ProduceCommand.keyOf(utf8("{\"campaign_id\":42}"))).isNull();
        assertThat(ProduceCommand.keyOf(utf8("{\"campaign_id\":null}"))).isNull();
        assertThat(ProduceCommand.keyOf(utf8("{\"event_id\":\"e1\"}"))).isNull();
        assertThat(ProduceCommand.keyOf(utf8("[\"campaign_id\",\"c-1\"]"))).isNull();
        assertThat(ProduceCommand.keyOf(utf8("\"c-1\""))).isNull();
        assertThat(ProduceCommand.keyOf(utf8("not json at all"))).isNull();
        assertThat(ProduceCommand.keyOf(utf8("{\"campaign_id\":\"c-1\""))).isNull(); // truncated
        assertThat(ProduceCommand.keyOf(utf8("{\"campaign_id\":\"c-1\"} trailing")))
                .isNull();
        assertThat(ProduceCommand.keyOf(new byte[] {(byte) 0xff, (byte) 0xfe, '{'}))
                .isNull();
    }

    @Test
    void linesAreRawBytesWithoutTheirTerminator() throws IOException {
        byte[] invalidUtf8 = {'{', (byte) 0xc3, (byte) 0x28, '}'};
        byte[] file = concat(utf8("first\r\nsecond\n\n   \n"), invalidUtf8, utf8("\nlast without newline"));
        List<byte[]> lines = readAll(new ByteArrayInputStream(file));
        assertThat(lines).hasSize(6);
        assertThat(lines.get(0)).isEqualTo(utf8("first"));
        assertThat(lines.get(1)).isEqualTo(utf8("second"));
        assertThat(ProduceCommand.isBlank(lines.get(2))).isTrue();
        assertThat(ProduceCommand.isBlank(lines.get(3))).isTrue();
        assertThat(lines.get(4)).isEqualTo(invalidUtf8);
        assertThat(lines.get(5)).isEqualTo(utf8("last without newline"));
        assertThat(ProduceCommand.isBlank(lines.get(5))).isFalse();
    }

    @Test
    void aFinalNewlineDoesNotMakeAnExtraLine() throws IOException {
        assertThat(readAll(new ByteArrayInputStream(utf8("a\nb\n")))).hasSize(2);
        assertThat(readAll(new ByteArrayInputStream(new byte[0]))).isEmpty();
    }

    private static List<byte[]> readAll(InputStream in) throws IOException {
        List<byte[]> lines = new ArrayList<>();
        byte[] line;
        while ((line = ProduceCommand.readLine(in)) != null) lines.add(line);
        return lines;
    }

    private static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) n += p.length;
        byte[] all = new byte[n];
        int at = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, all, at, p.length);
            at += p.length;
        }
        return all;
    }
}
