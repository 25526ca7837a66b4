package dev.recount.core.sets;

import dev.recount.core.event.AdEvent;
import java.io.Serializable;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * One condition of a measure's {@code where}: the string field's value is one of {@code values}. A measure counts an
 * event when all its conditions hold.
 */
public final class Filter implements Serializable {
    private static final long serialVersionUID = 1L;

    private final EventField field;
    private final String[] values;

    public Filter(EventField field, List<String> values) {
        this.field = Objects.requireNonNull(field, "field");
        if (field.type() != FieldType.STRING) throw new IllegalArgumentException(field + " is not a string field");
        if (values.isEmpty()) throw new IllegalArgumentException("a filter needs at least one value");
        // Interned: event types and most attribute values are constants, so the identity check usually decides.
        this.values = values.stream().map(String::intern).toArray(String[]::new);
    }

    public EventField field() {
        return field;
    }

    public List<String> values() {
        return List.of(values);
    }

    public boolean matches(AdEvent e) {
        String v = field.text(e);
        for (String accepted : values) {
            if (accepted == v || accepted.equals(v)) return true;
        }
        return false;
    }

    /**
     * This condition as a SQL predicate, {@code column IN ('a', 'b')}, with the engine's own column reference and
     * string literal (quoting rules differ: Spark SQL reads backslashes as escapes, PostgreSQL does not).
     */
    public String sql(Function<String, String> column, Function<String, String> literal) {
        StringBuilder b = new StringBuilder(column.apply(field.name())).append(" IN (");
        for (int i = 0; i < values.length; i++) b.append(i == 0 ? "" : ", ").append(literal.apply(values[i]));
        return b.append(')').toString();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Filter f && f.field.equals(field) && f.values().equals(values());
    }

    @Override
    public int hashCode() {
        return field.hashCode() * 31 + values().hashCode();
    }

    @Override
    public String toString() {
        return field + " in " + values();
    }
}
