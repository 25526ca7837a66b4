package dev.recount.batch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.batch.testutils.LakeEvent;
import dev.recount.batch.testutils.SharedSpark;
import dev.recount.batch.testutils.TestSets;
import dev.recount.core.sets.EventFields;
import dev.recount.core.sets.Filter;
import dev.recount.core.sets.Measure;
import dev.recount.core.sets.MeasureSums;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.Test;

/** A set's definition as Spark columns: literals Spark reads back exactly, and attributes resolved from the JSON. */
class LakeSetColumnsTest {
    private static final long W = Instant.parse("2026-11-28T10:00:00Z").toEpochMilli();

    /** Values a filter may name that Spark SQL's string literals would misread if written naively. */
    private static final List<String> AWKWARD = List.of(
            "back\\slash",
            "it's",
            "\\'",
            "\\u0041", // Spark reads this unicode escape as "A" unless its backslash is escaped
            "ends with \\",
            "tab\there",
            "line\nbreak",
            "percent%_underscore",
            "double\"quote",
            "ünïcödé ☃");

    @Test
    void literalsAreReadBackExactlyBySpark() {
        for (String value : AWKWARD) {
            Row r = SharedSpark.session()
                    .sql("SELECT " + LakeSetColumns.literal(value))
                    .first();
            assertThat(r.getString(0)).as(value).isEqualTo(value);
        }
    }

    /**
     * A measure filtered on those values, over lake rows holding them, a near miss of each and the unescaped reading
     * ("A" for the unicode escape): Spark counts what core's {@link Measure#contribution} counts, event by event.
     */
    @Test
    void aFilterOnAwkwardValuesCountsWhatCoreCounts() {
        EventFields fields = new EventFields(List.of());
        Measure awkward = Measure.count(
                "awkward", List.of(new Filter(fields.field("campaign_id").orElseThrow(), AWKWARD)));
        MetricSet set = new MetricSet(
                "awkward",
                List.of(fields.field("channel_id").orElseThrow()),
                List.of(awkward),
                List.of(),
                Duration.ofMinutes(1),
                Set.of(),
                false,
                Map.of(),
                0);
        List<LakeEvent> lake = new ArrayList<>();
        List<String> campaigns = new ArrayList<>(AWKWARD);
        for (String v : AWKWARD) campaigns.add(v + "x");
        campaigns.addAll(List.of("A", "backslash", "its", "'", "\\"));
        MeasureSums expected = set.newSums();
        for (int i = 0; i < campaigns.size(); i++) {
            LakeEvent e = LakeEvent.of("e" + i, "click", W + i, campaigns.get(i), "ch", 1, i);
            lake.add(e);
            set.add(expected, e.toAdEvent());
        }
        Dataset<Row> frame = SharedSpark.session()
                .createDataFrame(lake.stream().map(LakeEvent::toRow).toList(), LakeReader.FILE_SCHEMA);
        try (WindowAggregation.Recomputed r =
                WindowAggregation.recompute(frame, List.of(WindowAggregation.SetScope.all(set)), List.of())) {
            Row row = r.stored(set).first();
            assertThat(row.getLong(row.fieldIndex("awkward")))
                    .isEqualTo(expected.sums[0])
                    .isEqualTo(AWKWARD.size());
            assertThat(row.getLong(row.fieldIndex("events"))).isEqualTo(campaigns.size());
        }
    }

    /**
     * Each attribute is resolved by core's rule on its own: a row whose country breaks its rule keeps its valid
     * slot_id and quantity (so it still counts in sets that read only those); JSON that is no object, or no JSON,
     * breaks every attribute; no JSON at all (a file before the column, or an event without extras) is the defaults.
     */
    @Test
    void eachAttributeIsResolvedByCoresRuleOnItsOwn() {
        MetricSets three = TestSets.parse(TestSets.THREE_SETS);
        DeclaredAttributes declared = DeclaredAttributes.usedBy(three.sets(), three.attributes());
        assertThat(declared.attributes()).extracting(a -> a.name()).containsExactly("slot_id", "country", "quantity");

        assertThat(Arrays.asList(declared.resolve(null))).containsExactly("none", "other", 0L);
        assertThat(Arrays.asList(declared.resolve("{\"slot_id\":\"s1\",\"country\":\"DE\",\"quantity\":5}")))
                .containsExactly("s1", "DE", 5L);
        assertThat(Arrays.asList(declared.resolve("{\"slot_id\":\"s1\",\"country\":\"XX\",\"quantity\":5}")))
                .containsExactly("s1", null, 5L);
        assertThat(Arrays.asList(declared.resolve("{\"quantity\":-1,\"country\":null}")))
                .containsExactly("none", "other", null);
        assertThat(Arrays.asList(declared.resolve("[1]"))).containsExactly(null, null, null);
        assertThat(Arrays.asList(declared.resolve("{not json"))).containsExactly(null, null, null);

        // A set reads only its own: the default set none (no UDF at all), campaign_slot slot_id alone.
        assertThat(DeclaredAttributes.usedBy(List.of(TestSets.defaultSet()), three.attributes())
                        .isEmpty())
                .isTrue();
        assertThat(DeclaredAttributes.usedBy(List.of(three.set("campaign_slot").orElseThrow()), three.attributes())
                        .attributes())
                .extracting(a -> a.name())
                .containsExactly("slot_id");
    }
}
