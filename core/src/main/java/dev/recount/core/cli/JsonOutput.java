package dev.recount.core.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import picocli.CommandLine.Option;

/**
 * The {@code --json} option a command mixes in ({@code @Mixin JsonOutput json}): with it, the command prints exactly
 * one JSON object on stdout with the facts its text output gives, for scripts and schedulers; exit codes and the
 * one-line errors on stderr stay as they are. The object is built with Jackson nodes, so every string is escaped
 * and every number exact (a {@link java.math.BigInteger} stays an integer however large).
 */
public final class JsonOutput {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    @Option(
            names = "--json",
            description = "Print one JSON object on stdout instead of text (same facts;"
                    + " exit codes and errors on stderr unchanged).")
    boolean enabled;

    /** True when the user asked for {@code --json}. */
    public boolean enabled() {
        return enabled;
    }

    /** An empty object to fill; its fields print in the order they were put. */
    public static ObjectNode object() {
        return MAPPER.createObjectNode();
    }

    /** Prints {@code json} on one line and flushes: the command's whole stdout. */
    public static void print(PrintWriter out, ObjectNode json) {
        try {
            out.println(MAPPER.writeValueAsString(json));
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException("cannot write the JSON output", e);
        }
        out.flush();
    }
}
