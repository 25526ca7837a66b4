package dev.recount.core.config;

import java.io.IOException;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Where a password comes from, never the password itself: the environment variable {@code variable} if it is set,
 * else the first line of {@code file}, else none (trust or peer authentication). It is resolved only when asked,
 * on the machine that asks, so it can travel inside a Flink job graph or a Spark closure without carrying the
 * secret: a TaskManager reads its own environment or file.
 *
 * @param variable the environment variable's name; blank for none
 * @param file     the password file; blank for none
 */
public record PasswordSource(String variable, String file) implements Serializable {
    private static final long serialVersionUID = 1L;

    public PasswordSource {
        variable = variable == null ? "" : variable.strip();
        file = file == null ? "" : file.strip();
    }

    /** Resolves against this process's environment. */
    public String resolve() {
        return resolve(System.getenv());
    }

    /**
     * @return the password, or null when neither the variable is set nor a file is named
     * @throws IllegalArgumentException naming the file when it is named but cannot be read
     */
    public String resolve(Map<String, String> environment) {
        if (!variable.isEmpty()) {
            String fromEnv = environment.get(variable);
            if (fromEnv != null) return fromEnv;
        }
        if (file.isEmpty()) return null;
        try {
            List<String> lines = Files.readAllLines(Path.of(file), StandardCharsets.UTF_8);
            return lines.isEmpty() ? "" : lines.get(0).strip();
        } catch (IOException e) {
            throw new IllegalArgumentException(
                    "cannot read the password file " + file
                            + (variable.isEmpty() ? "" : " ($" + variable + " is not set either)") + ": " + e,
                    e);
        }
    }

    /** Names the variable and the file, never the password. */
    @Override
    public String toString() {
        if (variable.isEmpty() && file.isEmpty()) return "no password";
        if (file.isEmpty()) return "$" + variable;
        return variable.isEmpty() ? "file " + file : "$" + variable + ", else file " + file;
    }
}
