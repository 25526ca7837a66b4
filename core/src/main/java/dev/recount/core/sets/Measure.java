package dev.recount.core.sets;

import dev.recount.core.event.AdEvent;
import java.io.Serializable;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * An additive measure of a metric set: per window key, the number of events ({@link Kind#COUNT}) or the exact sum of
 * an integer field ({@link Kind#SUM}) over the events its {@link Filter}s accept (all of them without a filter).
 * Defined once here as "what one event contributes" ({@link #contribution}); Spark sums the same rule written as an
 * expression ({@link #sqlContribution}).
 *
 * <p>A count is 64-bit everywhere ({@link #COUNT_SQL_TYPE}). A sum cannot be: one event's value may be up to 2^63 - 1,
 * so two of them overflow a long; sums are exact integers of up to 38 digits ({@link #SUM_SQL_TYPE}), never wrapped
 * or rounded.
 */
public final class Measure implements Serializable {
    private static final long serialVersionUID = 1L;

    /** SQL type of a count and its sums: 64-bit, overflow is an error (PostgreSQL, Spark with ANSI mode on). */
    public static final String COUNT_SQL_TYPE = "BIGINT";
    /** SQL type of a sum: an exact integer of up to 38 digits, which every engine recount uses supports. */
    public static final String SUM_SQL_TYPE = "DECIMAL(38,0)";

    /** The name of the count of every event of a key, which every set has (the stream's upsert guard reads it). */
    public static final String EVENTS = "events";

    public enum Kind {
        COUNT,
        SUM;

        public String word() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    private final String name;
    private final Kind kind;
    private final EventField field;
    private final Filter[] filters;

    /**
     * @param field the summed field for {@link Kind#SUM} (an integer field), null for {@link Kind#COUNT}
     */
    public Measure(String name, Kind kind, EventField field, List<Filter> filters) {
        this.name = Objects.requireNonNull(name, "name");
        this.kind = Objects.requireNonNull(kind, "kind");
        if ((kind == Kind.SUM) != (field != null)) {
            throw new IllegalArgumentException("measure " + name + ": a sum names one field, a count none");
        }
        if (field != null && field.type() != FieldType.INTEGER) {
            throw new IllegalArgumentException("measure " + name + ": " + field + " is not an integer field");
        }
        this.field = field;
        this.filters = filters.toArray(Filter[]::new);
    }

    public static Measure count(String name, List<Filter> filters) {
        return new Measure(name, Kind.COUNT, null, filters);
    }

    public static Measure sum(String name, EventField field, List<Filter> filters) {
        return new Measure(name, Kind.SUM, field, filters);
    }

    public String name() {
        return name;
    }

    public Kind kind() {
        return kind;
    }

    /** The summed field; null for a count. */
    public EventField field() {
        return field;
    }

    public List<Filter> filters() {
        return List.of(filters);
    }

    /** True for a count (a 64-bit column); false for a sum (an exact integer of up to 38 digits). */
    public boolean isCount() {
        return kind == Kind.COUNT;
    }

    /** {@link #COUNT_SQL_TYPE} or {@link #SUM_SQL_TYPE}: the type of this measure's columns and sums. */
    public String sqlType() {
        return isCount() ? COUNT_SQL_TYPE : SUM_SQL_TYPE;
    }

    /** What one event adds: 0 when a filter refuses it, else 1 or the field's value (never negative). */
    public long contribution(AdEvent e) {
        for (Filter f : filters) {
            if (!f.matches(e)) return 0L;
        }
        return field == null ? 1L : field.number(e);
    }

    /**
     * The same rule as {@link #contribution} as a SQL expression of type {@code type} (one event's contribution fits
     * a BIGINT; a caller may sum it as {@link #sqlType()} or split it, as the batch layer does).
     *
     * @param column  the engine's reference to a field's column, by field name
     * @param literal the engine's string literal of a value
     */
    public String sqlContribution(Function<String, String> column, Function<String, String> literal, String type) {
        String value = field == null ? "1" : column.apply(field.name());
        String cast = "CAST(" + value + " AS " + type + ")";
        if (filters.length == 0) return cast;
        StringBuilder when = new StringBuilder();
        for (int i = 0; i < filters.length; i++) {
            when.append(i == 0 ? "" : " AND ").append(filters[i].sql(column, literal));
        }
        return "CASE WHEN " + when + " THEN " + cast + " ELSE CAST(0 AS " + type + ") END";
    }

    /** Whether {@code other} counts the same thing (its name aside). */
    public boolean sameDefinition(Measure other) {
        return kind == other.kind
                && Objects.equals(field, other.field)
                && filters().equals(other.filters());
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Measure m && m.name.equals(name) && sameDefinition(m);
    }

    @Override
    public int hashCode() {
        return name.hashCode();
    }

    @Override
    public String toString() {
        return name + " = " + (field == null ? "count" : "sum(" + field + ")")
                + (filters.length == 0 ? "" : " where " + filters());
    }
}
