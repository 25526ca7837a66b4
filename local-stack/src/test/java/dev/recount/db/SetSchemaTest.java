package dev.recount.db;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.core.config.RecountConfig;
import dev.recount.core.sets.DefinitionException;
import dev.recount.core.sets.Identifiers;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import dev.recount.db.sets.SetSchema;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** What SetSchema generates without a database: names that cannot collide, nothing but names from a definition. */
class SetSchemaTest {
    /** The columns the tables have besides a set's own, which the generator and its tests take from core. */
    static List<String> ownColumns() {
        return Identifiers.RESERVED_COLUMNS.stream().sorted().toList();
    }

    static MetricSet set(String attributes, String declaration) {
        String yaml = "version: 1\nattributes:\n" + attributes + "sets:\n  - name: s\n" + declaration;
        return MetricSets.parse(yaml, "sets.yaml", RecountConfig.defaults())
                .set("s")
                .orElseThrow();
    }

    static MetricSet measureNamed(String name) {
        return set(
                "  slot_id: {type: string, default: x}\n",
                "    dimensions: [slot_id]\n    measures:\n      - {name: %s, kind: count}\n".formatted(name));
    }

    static MetricSet dimensionNamed(String name) {
        return set(
                "  %s: {type: string, default: x}\n".formatted(name),
                "    dimensions: [%s]\n    measures:\n      - {name: n, kind: count}\n".formatted(name));
    }

    static MetricSet ratioNamed(String name) {
        return set(
                "  slot_id: {type: string, default: x}\n",
                ("    dimensions: [slot_id]\n    measures:\n      - {name: n, kind: count}\n"
                                + "    ratios:\n      - {name: %s, numerator: n, denominator: events}\n")
                        .formatted(name));
    }

    /** A measure, a ratio or (through an attribute) a dimension of a column name the tables have is refused. */
    @ParameterizedTest
    @MethodSource("ownColumns")
    void theDefinitionsRefuseEveryColumnNameTheTablesHaveAlready(String column) {
        assertThatThrownBy(() -> measureNamed(column)).as("measure " + column).isInstanceOf(DefinitionException.class);
        assertThatThrownBy(() -> dimensionNamed(column))
                .as("dimension " + column)
                .isInstanceOf(DefinitionException.class);
        assertThatThrownBy(() -> ratioNamed(column)).as("ratio " + column).isInstanceOf(DefinitionException.class);
    }

    /** The control: the same definitions with a name of their own are valid, so a refusal above is the name's. */
    @Test
    void theSameDefinitionsWithAnOrdinaryNameAreValid() {
        assertThat(measureNamed("ordinary").measureNames()).contains("ordinary");
        assertThat(dimensionNamed("ordinary").dimensionNames()).containsExactly("ordinary");
        assertThat(ratioNamed("ordinary").ratios()).hasSize(1);
    }

    /** A filter's values are data: they select events in the stream and in Spark, and never reach DDL. */
    @Test
    void noFilterValueReachesTheDdl() {
        MetricSet s = set(
                "  slot_id: {type: string, default: x}\n",
                "    dimensions: [slot_id]\n    measures:\n"
                        + "      - {name: n, kind: count, where: {slot_id: [\"zz'; DROP TABLE t; --\", qqqq]}}\n"
                        + "    attribution: true\n");
        List<String> ddl = new SetSchema(s, "recount").create();
        assertThat(ddl).isNotEmpty().noneMatch(sql -> sql.contains("DROP TABLE t") || sql.contains("qqqq"));
        assertThat(ddl).noneMatch(sql -> sql.matches("(?s).*\\{[a-z_]+}.*"));
    }

    @Test
    void theDefaultSetsObjectsAreTheMigrations() {
        MetricSet d = MetricSets.defaults().defaultSet().orElseThrow();
        assertThatThrownBy(() -> new SetSchema(d, "recount")).isInstanceOf(IllegalArgumentException.class);
    }
}
