package dev.recount.core.sets;

import dev.recount.core.config.ConfigException;

/**
 * A metric-set definitions file that cannot be used, as one line naming the file, the line and the rule:
 * {@code config/metric-sets.yaml:14: set campaign_slot, measure slot_spend: ...}. A bad setting, so every command
 * exits 2 on it and starts nothing.
 */
public final class DefinitionException extends ConfigException {
    private final String source;
    private final int line;

    public DefinitionException(String source, int line, String rule) {
        super(source + (line > 0 ? ":" + line : "") + ": " + rule);
        this.source = source;
        this.line = line;
    }

    /** The file (or "built-in ..."). */
    public String source() {
        return source;
    }

    /** 1-based; 0 when the problem is not on one line. */
    public int line() {
        return line;
    }
}
