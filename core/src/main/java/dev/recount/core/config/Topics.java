package dev.recount.core.config;

import java.io.Serializable;

/** The three topics of CONTRACT §1 and §3. */
public record Topics(String input, String deadLetter, String backfill, int inputPartitions) implements Serializable {
    public Topics {
        if (inputPartitions < 1)
            throw new IllegalArgumentException("inputPartitions must be >= 1, got " + inputPartitions);
    }
}
