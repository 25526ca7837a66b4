package dev.recount.core.config;

/**
 * A setting that is unknown, unreadable or out of range. Commands exit 2 on it (bad settings, nothing run), as on a
 * bad flag; it is an {@link IllegalArgumentException}, so callers that catch those still do.
 */
public class ConfigException extends IllegalArgumentException {
    public ConfigException(String message) {
        super(message);
    }

    public ConfigException(String message, Throwable cause) {
        super(message, cause);
    }
}
