package dev.recount.deploy.local;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code home/local.env}: the connection settings of the local stack as POSIX shell assignments, so that
 * {@code . .recount/local.env && psql} works. Every value is single-quoted; a quote inside becomes {@code '\''}.
 */
public final class LocalEnvFile {
    private LocalEnvFile() {}

    public static String render(Map<String, String> values) {
        StringBuilder out = new StringBuilder();
        out.append("# Connection settings of the local recount stack, written by `recount up`.\n");
        out.append("# Use: . ").append("<this file>").append(" && psql\n");
        values.forEach((key, value) -> {
            if (!key.matches("[A-Z_][A-Z0-9_]*")) throw new IllegalArgumentException("not a shell variable name: " + key);
            out.append("export ").append(key).append('=').append(quote(value)).append('\n');
        });
        return out.toString();
    }

    /** Single-quotes a value for a POSIX shell: nothing inside single quotes is special except the quote itself. */
    public static String quote(String value) {
        return "'" + value.replace("'", "'\\''") + "'";
    }

    /** Owner-only: it holds the admin password. */
    public static void write(Path file, Map<String, String> values) {
        StackFiles.writeAtomically(file, render(values), true);
    }

    /** Reads back what {@link #render} writes (also plain {@code KEY=value} lines); empty map when there is no file. */
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
                values.put(l.substring(0, eq).strip(), unquote(l.substring(eq + 1).strip()));
            }
        } catch (IOException e) {
            throw new StackException("cannot read " + file + ": " + e.getMessage(), e);
        }
        return values;
    }

    static String unquote(String raw) {
        if (raw.length() >= 2 && raw.startsWith("'") && raw.endsWith("'")) {
            return raw.substring(1, raw.length() - 1).replace("'\\''", "'");
        }
        return raw;
    }
}
