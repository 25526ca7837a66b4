package dev.recount.core.fuzz;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * JSON as the fuzzer builds it: the values, plus how each string is spelled on the wire, so a test knows exactly which
 * bytes it sent and what a correct parser must make of them.
 */
sealed interface Json {
    record Str(String value, Spelling spelling) implements Json {}

    /** A JSON number literal, written as is (always valid JSON number syntax). */
    record Num(String literal) implements Json {}

    record Bool(boolean value) implements Json {}

    record Null() implements Json {}

    record Arr(List<Json> items) implements Json {}

    record Obj(List<Member> members) implements Json {}

    record Member(Str key, Json value) {}

    /** How a string's characters become bytes. */
    enum Spelling {
        /** UTF-8 as is; escapes only where JSON requires them (quote, backslash, C0 controls). DEL and C1 go raw. */
        PLAIN,
        /** Everything outside printable ASCII as a {@code \\uXXXX} escape (a surrogate pair as two escapes). */
        ESCAPED,
        /** Like PLAIN, but C0 controls raw: not JSON when the string has one. */
        RAW_C0,
        /** Like PLAIN, but an unpaired surrogate as its 3-byte CESU-8 form: not UTF-8 when the string has one. */
        RAW_SURROGATES
    }

    /** The UTF-8 bytes of {@code value}, with {@code space} between every token (JSON whitespace only). */
    static byte[] write(Json value, String space) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        write(value, space, out);
        return out.toByteArray();
    }

    private static void write(Json value, String space, ByteArrayOutputStream out) {
        if (value instanceof Str s) {
            writeString(s, out);
        } else if (value instanceof Num n) {
            ascii(n.literal(), out);
        } else if (value instanceof Bool b) {
            ascii(Boolean.toString(b.value()), out);
        } else if (value instanceof Null) {
            ascii("null", out);
        } else if (value instanceof Arr a) {
            ascii("[" + space, out);
            for (int i = 0; i < a.items().size(); i++) {
                if (i > 0) ascii(space + "," + space, out);
                write(a.items().get(i), space, out);
            }
            ascii(space + "]", out);
        } else if (value instanceof Obj o) {
            ascii("{" + space, out);
            for (int i = 0; i < o.members().size(); i++) {
                if (i > 0) ascii(space + "," + space, out);
                writeString(o.members().get(i).key(), out);
                ascii(space + ":" + space, out);
                write(o.members().get(i).value(), space, out);
            }
            ascii(space + "}", out);
        }
    }

    private static void writeString(Str str, ByteArrayOutputStream out) {
        String s = str.value();
        Spelling spelling = str.spelling();
        out.write('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean pair =
                    Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1));
            if (c == '"' || c == '\\') {
                out.write('\\');
                out.write(c);
            } else if (c < 0x20) {
                if (spelling == Spelling.RAW_C0) out.write(c);
                else if (spelling == Spelling.PLAIN && c == '\n') ascii("\\n", out);
                else if (spelling == Spelling.PLAIN && c == '\t') ascii("\\t", out);
                else escape(c, out);
            } else if (c < 0x7F) {
                out.write(c);
            } else if (pair) {
                if (spelling == Spelling.ESCAPED) {
                    escape(c, out);
                    escape(s.charAt(i + 1), out);
                } else {
                    out.writeBytes(s.substring(i, i + 2).getBytes(StandardCharsets.UTF_8));
                }
                i++;
            } else if (Character.isSurrogate(c)) {
                if (spelling == Spelling.RAW_SURROGATES) {
                    out.write(0xE0 | c >> 12);
                    out.write(0x80 | (c >> 6 & 0x3F));
                    out.write(0x80 | (c & 0x3F));
                } else {
                    escape(c, out); // the only way valid UTF-8 JSON can carry one
                }
            } else if (spelling == Spelling.ESCAPED) {
                escape(c, out);
            } else {
                out.writeBytes(String.valueOf(c).getBytes(StandardCharsets.UTF_8));
            }
        }
        out.write('"');
    }

    private static void escape(char c, ByteArrayOutputStream out) {
        ascii(String.format("\\u%04x", (int) c), out);
    }

    private static void ascii(String s, ByteArrayOutputStream out) {
        out.writeBytes(s.getBytes(StandardCharsets.US_ASCII));
    }
}
