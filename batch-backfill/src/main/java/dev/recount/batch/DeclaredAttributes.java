package dev.recount.batch;

import static org.apache.spark.sql.functions.col;

import dev.recount.core.lake.LakeLayout;
import dev.recount.core.sets.Attribute;
import dev.recount.core.sets.AttributeResolver;
import dev.recount.core.sets.EventField;
import dev.recount.core.sets.FieldType;
import dev.recount.core.sets.Filter;
import dev.recount.core.sets.Measure;
import dev.recount.core.sets.MetricSet;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * The declared attributes some metric sets use, resolved from the lake's {@code attributes} column (the JSON text of
 * every field an event carried beyond the contract) by core's {@link AttributeResolver}: the rule the stream's validator
 * applies, so a set declared after its events were archived counts them as the stream would have. One Spark UDF adds
 * the struct column {@link #COLUMN} with a typed field per attribute, named like it ({@code _declared.slot_id}).
 *
 * <p>A field is null where the row's value of that attribute breaks its rule (only possible for events archived before
 * the attribute was declared, or declared otherwise): the row is then left out of the sets that use that attribute,
 * and only of those ({@link LakeSetColumns#valid()}); the stream would have refused the whole record, but history the
 * other sets counted stays counted. A file written before the column existed reads as null: no fields beyond the
 * contract, every attribute at its default (a required one is then invalid).
 *
 * <p>Only the attributes the run's sets use are resolved, and only when some set uses one: a run of sets without
 * attributes never calls the UDF.
 */
final class DeclaredAttributes implements Serializable {
    private static final long serialVersionUID = 1L;

    /** The struct column of resolved values; its name cannot be a definition's (they start with a letter). */
    static final String COLUMN = "_declared";

    private final List<Attribute> attributes;

    private DeclaredAttributes(List<Attribute> attributes) {
        this.attributes = List.copyOf(attributes);
    }

    /**
     * The declared attributes (of {@code declared}) that any of {@code sets} uses as a dimension, in a filter or as a
     * summed field, in declaration order; none resolved when none is used.
     */
    static DeclaredAttributes usedBy(Collection<MetricSet> sets, List<Attribute> declared) {
        Set<String> used = new LinkedHashSet<>();
        for (MetricSet s : sets) used.addAll(attributeNames(s));
        List<Attribute> out = new ArrayList<>();
        for (Attribute a : declared) {
            if (used.remove(a.name())) out.add(a);
        }
        if (!used.isEmpty()) {
            throw new IllegalArgumentException("metric sets use attributes " + used + " that are not declared");
        }
        return new DeclaredAttributes(out);
    }

    /** The names of the attributes {@code set} reads: its attribute dimensions, filters and summed fields. */
    static Set<String> attributeNames(MetricSet set) {
        Set<String> names = new LinkedHashSet<>();
        for (EventField d : set.dimensions()) {
            if (d.isAttribute()) names.add(d.name());
        }
        for (Measure m : set.measures()) {
            if (m.field() != null && m.field().isAttribute())
                names.add(m.field().name());
            for (Filter f : m.filters()) {
                if (f.field().isAttribute()) names.add(f.field().name());
            }
        }
        return names;
    }

    boolean isEmpty() {
        return attributes.isEmpty();
    }

    List<Attribute> attributes() {
        return attributes;
    }

    /** The type of {@link #COLUMN}: one nullable field per attribute, string or bigint as declared. */
    StructType type() {
        StructType t = new StructType();
        for (Attribute a : attributes) {
            t = t.add(a.name(), a.type() == FieldType.STRING ? DataTypes.StringType : DataTypes.LongType, true);
        }
        return t;
    }

    /** {@code rows} with {@link #COLUMN} resolved from their {@code attributes} column; unchanged when none is used. */
    Dataset<Row> addTo(Dataset<Row> rows) {
        if (isEmpty()) return rows;
        UserDefinedFunction resolve = functions.udf(new Resolve(attributes), type());
        return rows.withColumn(COLUMN, resolve.apply(col(LakeLayout.ATTRIBUTES)));
    }

    /**
     * The values one row's {@code attributes} JSON resolves to (the UDF's own code, for tests): per attribute, its
     * value, or null where the row breaks that attribute's rule.
     */
    Object[] resolve(String attributesJson) {
        return new Resolve(attributes).values(attributesJson);
    }

    /**
     * The UDF: every used attribute resolved at once (one JSON parse, the usual case: all valid); only when one is
     * invalid, each again alone, so that the others keep their values.
     */
    private static final class Resolve implements UDF1<String, Row> {
        private static final long serialVersionUID = 1L;
        private final List<Attribute> attributes;
        private final AttributeResolver all;
        private final AttributeResolver[] each;
        /** Per attribute: its slot in the resolver's string or integer values. */
        private final int[] slots;

        Resolve(List<Attribute> attributes) {
            this.attributes = attributes;
            this.all = new AttributeResolver(attributes);
            this.each = new AttributeResolver[attributes.size()];
            this.slots = new int[attributes.size()];
            int strings = 0;
            int integers = 0;
            for (int i = 0; i < each.length; i++) {
                Attribute a = attributes.get(i);
                each[i] = new AttributeResolver(List.of(a));
                slots[i] = a.type() == FieldType.STRING ? strings++ : integers++;
            }
        }

        @Override
        public Row call(String attributesJson) {
            return RowFactory.create(values(attributesJson));
        }

        Object[] values(String attributesJson) {
            Object[] out = new Object[each.length];
            AttributeResolver.Resolved resolved = all.resolve(attributesJson);
            if (resolved.isValid()) {
                for (int i = 0; i < out.length; i++) out[i] = value(resolved, i, slots[i]);
                return out;
            }
            for (int i = 0; i < out.length; i++) {
                AttributeResolver.Resolved one = each[i].resolve(attributesJson);
                out[i] = one.isValid() ? value(one, i, 0) : null;
            }
            return out;
        }

        private Object value(AttributeResolver.Resolved r, int attribute, int slot) {
            return attributes.get(attribute).type() == FieldType.STRING
                    ? r.strings()[slot]
                    : (Object) r.integers()[slot];
        }
    }
}
