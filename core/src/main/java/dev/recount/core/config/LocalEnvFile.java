package dev.recount.core.config;

import dev.recount.core.io.AtomicFile;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code <home>/local.env}: the local stack's connection settings as POSIX shell assignments, so that
 * {@code . .recount/local.env && psql} works. The one reader and writer of the file: {@code up} and {@code down}
 * write it, the tools, the tests and the benchmarks read it. Every value is single-quoted; a quote inside becomes
 * {@code '\''}. It lives in core because readers that never start a stack (testkit, benchmarks) need it too.
 */
public final class LocalEnvFile {
    /** The file's name inside a stack's home directory. */
    public static final String FILE_NAME = "local.env";

    private LocalEnvFile() {}

    /** Where the stack whose data lives under {@code home} keeps its local.env. */
    public static Path in(Path home) {
        return home.resolve(FILE_NAME);
    }

    public static String render(Map<String, String> values) {
        StringBuilder out = new StringBuilder();
        out.append("# Connection settings of the local recount stack, written by `recount up`.\n");
        out.append("# Use: . <this file> && psql\n");
        values.forEach((key, value) -> {
            if (!key.matches("[A-Z_][A-Z0-9_]*"))
                throw new IllegalArgumentException("not a shell variable name: " + key);
            out.append("export ").append(key).append('=').append(quote(value)).append('\n');
        });
        return out.toString();
    }

    /** Single-quotes a value for a POSIX shell: nothing inside single quotes is special except the quote itself. */
    public static String quote(String value) {
        return "'" + value.replace("'", "'\\''") + "'";
    }

    /**
     * Writes the file owner-only (it holds the administrator's password), whole or not at all: a temp file renamed
     * over the old one, so a reader never sees half a file.
     */
    public static void write(Path file, Map<String, String> values) {
        String text = render(values);
        try {
            AtomicFile.write(file, text, true);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
        }
    }

    /**
     * Rewrites the file with {@code add} set and {@code remove} gone, keeping every other assignment and the order;
     * does nothing when there is no file (nothing to amend: {@code up} writes it whole).
     */
    public static void amend(Path file, Map<String, String> add, Collection<String> remove) {
        if (!Files.isRegularFile(file)) return;
        Map<String, String> values = read(file);
        values.keySet().removeAll(remove);
        values.putAll(add);
        write(file, values);
    }

    /**
     * Reads back what {@link #write} writes, and also plain {@code KEY=value} and {@code KEY="value"} lines (no
     * expansion); an empty map when there is no file. Keeps the file's order.
     */
    public static Map<String, String> read(Path file) {
        Map<String, String> values = new LinkedHashMap<>();
        if (!Files.isRegularFile(file)) return values;
        try {
            for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                String l = line.strip();
                if (l.isEmpty() || l.startsWith("#")) continue;
                if (l.startsWith("export ")) l = l.substring("export ".length()).strip();
                int eq = l.indexOf('=');
                if (eq <= 0) continue;
                values.put(
                        l.substring(0, eq).strip(), unquote(l.substring(eq + 1).strip()));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
        }
        return values;
    }

    static String unquote(String raw) {
        if (raw.length() >= 2 && raw.startsWith("'") && raw.endsWith("'")) {
            return raw.substring(1, raw.length() - 1).replace("'\\''", "'");
        }
        if (raw.length() >= 2 && raw.startsWith("\"") && raw.endsWith("\"")) {
            return raw.substring(1, raw.length() - 1);
        }
        return raw;
    }
}
