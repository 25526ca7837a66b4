package dev.recount.core.sets;

import java.io.Serializable;
import java.util.List;
import java.util.Objects;

/**
 * A field events may carry beyond the contract's, declared so that metric sets can use it (CONTRACT §1,
 * "Attributes"). A string attribute is held to the id rule, or to a declared list of values; an integer one is a
 * whole number in [0, 2^63). Absent (or JSON null), it takes its default, or, when required, the record is a
 * {@code schema} dead letter. Exactly one of {@code required} and a default is given.
 *
 * @param values       for a string attribute, the only values accepted (empty: any id)
 * @param defaultValue the value an event without it gets; for an integer attribute its decimal text; null when
 *                     required
 * @param line         where the file declares it (0 for built-in definitions), for messages
 */
public record Attribute(
        String name, FieldType type, boolean required, String defaultValue, List<String> values, int line)
        implements Serializable {
    public Attribute {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        values = List.copyOf(values);
        if (required == (defaultValue != null)) {
            throw new IllegalArgumentException("attribute " + name + " needs either required or a default");
        }
    }

    /** The default as a number (integer attributes only). */
    public long defaultNumber() {
        return Long.parseLong(defaultValue);
    }
}
