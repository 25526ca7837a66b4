package dev.recount.batch;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.expr;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.when;

import dev.recount.core.lake.LakeLayout;
import dev.recount.core.sets.EventField;
import dev.recount.core.sets.Measure;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.window.WindowAlignment;
import java.util.List;
import org.apache.spark.sql.Column;

/**
 * One metric set's definition as Spark columns over lake rows: its window start, its dimensions and what each row
 * contributes to each measure. Nothing is restated: windows come from {@link WindowAlignment#sqlWindowStart}, each
 * contribution from {@link Measure#sqlContribution} (the rule {@link Measure#contribution} applies per event in the
 * stream), written with Spark's column references and string literals ({@link #literal}). Declared attributes are read
 * from {@link DeclaredAttributes#COLUMN}, which the rows must then carry.
 */
final class LakeSetColumns {
    private final MetricSet set;
    private final WindowAlignment windows;
    private final List<String> attributes;

    LakeSetColumns(MetricSet set) {
        this.set = set;
        this.windows = set.windows();
        this.attributes = List.copyOf(DeclaredAttributes.attributeNames(set));
    }

    MetricSet set() {
        return set;
    }

    /** Whether the set reads declared attributes (and its rows need {@link DeclaredAttributes#COLUMN}). */
    boolean usesAttributes() {
        return !attributes.isEmpty();
    }

    /** The start of the row's window of this set, epoch milliseconds. */
    Column windowStart() {
        return WindowAggregation.windowStart(LakeLayout.EVENT_TS, windows);
    }

    /** Dimension {@code i}'s value (null where an attribute's value is invalid: such a row counts nowhere). */
    Column dimension(int i) {
        return expr(sqlReference(set.dimensions().get(i)));
    }

    /** Whether the row's values of every attribute the set reads hold to their rules; always true without any. */
    Column valid() {
        Column valid = lit(true);
        for (String a : attributes)
            valid = valid.and(col(DeclaredAttributes.COLUMN).getField(a).isNotNull());
        return valid;
    }

    /**
     * What the row adds to {@code measure}, a BIGINT (one event's contribution fits one; the caller sums it exactly):
     * {@link Measure#sqlContribution}, and 0 for a row {@link #valid()} refuses.
     */
    Column contribution(Measure measure) {
        Column c = expr(measure.sqlContribution(this::sqlReference, LakeSetColumns::literal, Measure.COUNT_SQL_TYPE));
        return usesAttributes() ? when(valid(), c).otherwise(lit(0L)) : c;
    }

    /** 1 for a row left out of this set because an attribute it reads is invalid, else 0. */
    Column leftOut() {
        return usesAttributes() ? when(valid(), lit(0L)).otherwise(lit(1L)) : lit(0L);
    }

    private String sqlReference(String field) {
        return sqlReference(set.dimensions().stream()
                .filter(d -> d.name().equals(field))
                .findFirst()
                .orElseGet(() -> fieldOfMeasures(field)));
    }

    private EventField fieldOfMeasures(String name) {
        for (Measure m : set.measures()) {
            if (m.field() != null && m.field().name().equals(name)) return m.field();
            for (var f : m.filters()) {
                if (f.field().name().equals(name)) return f.field();
            }
        }
        throw new IllegalArgumentException("set " + set.name() + " has no field " + name);
    }

    /**
     * A field as Spark SQL reads it from a lake row: a contract field is the lake's column of that name (request_id,
     * absent on some events, is the empty string there, as {@link EventField#text} reads it), an attribute the field
     * of {@link DeclaredAttributes#COLUMN}.
     */
    static String sqlReference(EventField field) {
        if (field.isAttribute()) return quoted(DeclaredAttributes.COLUMN) + "." + quoted(field.name());
        if (field.source() == EventField.Source.REQUEST_ID) return "coalesce(" + quoted(field.name()) + ", '')";
        return quoted(field.name());
    }

    private static String quoted(String name) {
        return '`' + name.replace("`", "``") + '`';
    }

    /**
     * {@code value} as a Spark SQL string literal. Spark reads a backslash in a literal as an escape (unlike standard
     * SQL and PostgreSQL, where only a doubled quote is one), so both the backslash and the quote are escaped with
     * one; everything else stands for itself. {@code LakeSetColumnsTest} reads values full of both back through Spark.
     */
    static String literal(String value) {
        StringBuilder b = new StringBuilder(value.length() + 2).append('\'');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '\\' || c == '\'') b.append('\\');
            b.append(c);
        }
        return b.append('\'').toString();
    }
}
