package dev.recount.core.sets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.core.config.ConfigException;
import dev.recount.core.config.RecountConfig;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.Test;

class MetricSetsTest {
    private static final RecountConfig CONFIG = RecountConfig.defaults();

    /** Three sets over declared attributes, as the demo declares them. */
    static final String THREE_SETS = """
            version: 1
            attributes:
              slot_id: {type: string, default: none}
              country: {type: string, values: [DE, FR, US, other], default: other}
              quantity: {type: integer, default: 0}
            sets:
              - name: default
              - name: campaign_slot
                dimensions: [campaign_id, slot_id]
                measures:
                  - {name: impressions, kind: count, where: {event_type: impression}}
                  - {name: clicks, kind: count, where: {event_type: click}}
                  - {name: spend_micros, kind: sum, field: cost_micros}
                ratios:
                  - {name: ctr, numerator: clicks, denominator: impressions}
                window: 5m
                rollups: [hourly]
                tolerance:
                  clicks: {relative: 0.001, absolute: 2}
              - name: channel_country
                dimensions: [channel_id, country]
                measures:
                  - {name: eu_clicks, kind: count, where: {event_type: click, country: [DE, FR]}}
                  - {name: units, kind: sum, field: quantity}
                attribution: true
            """;

    private static MetricSets parse(String yaml) {
        return MetricSets.parse(yaml, "sets.yaml", CONFIG);
    }

    @Test
    void theBuiltInDefinitionsAreTodaysMetricsAsTheDefaultSet() {
        MetricSets defs = MetricSets.defaults();

        assertThat(defs.sets()).hasSize(1);
        MetricSet d = defs.defaultSet().orElseThrow();
        assertThat(d.isDefault()).isTrue();
        assertThat(d.dimensionNames()).containsExactly("campaign_id", "channel_id");
        assertThat(d.measureNames()).containsExactly("impressions", "clicks", "conversions", "spend_micros", "events");
        assertThat(d.measures().stream().map(Measure::isCount)).containsExactly(true, true, true, false, true);
        assertThat(d.ratios().stream().map(DerivedRatio::name))
                .containsExactly("ctr", "cvr", "cpc_micros", "cpm_micros", "cost_per_conversion_micros");
        assertThat(d.ratios().get(3).per()).isEqualTo(1000);
        assertThat(d.rollups()).isEqualTo(EnumSet.allOf(Rollup.class));
        assertThat(d.window()).isEqualTo(Duration.ofMinutes(1)); // window.size
        assertThat(d.attribution()).isFalse(); // attribution.enabled
        assertThat(d.tolerance("clicks")).isEqualTo(Tolerance.EXACT);
        assertThat(defs.attributes()).isEmpty();
    }

    @Test
    void theDefaultSetTakesItsWindowAttributionAndToleranceFromTheSettings() {
        RecountConfig config = CONFIG.with("window.size", "5m")
                .with("attribution.enabled", "true")
                .with("reconcile.tolerance.clicks.relative", "0.01")
                .with("reconcile.tolerance.spend_micros.absolute", "5");

        MetricSet d = MetricSets.fromConfig(config).defaultSet().orElseThrow();

        assertThat(d.window()).isEqualTo(Duration.ofMinutes(5));
        assertThat(d.attribution()).isTrue();
        assertThat(d.tolerance("clicks")).isEqualTo(new Tolerance(new BigDecimal("0.01"), 0));
        assertThat(d.tolerance("spend_micros")).isEqualTo(new Tolerance(BigDecimal.ZERO, 5));
    }

    @Test
    void aFileDeclaresAttributesAndSetsWithEverythingTheyCanHave() {
        MetricSets defs = parse(THREE_SETS);

        assertThat(defs.sets().stream().map(MetricSet::name))
                .containsExactly("default", "campaign_slot", "channel_country");
        assertThat(defs.attributes().stream().map(Attribute::name)).containsExactly("slot_id", "country", "quantity");
        assertThat(defs.attributes().get(1).values()).containsExactly("DE", "FR", "US", "other");
        assertThat(defs.attributes().get(2).defaultNumber()).isZero();

        MetricSet slot = defs.set("campaign_slot").orElseThrow();
        assertThat(slot.dimensionNames()).containsExactly("campaign_id", "slot_id");
        // events is every set's, last unless declared
        assertThat(slot.measureNames()).containsExactly("impressions", "clicks", "spend_micros", "events");
        assertThat(slot.eventsIndex()).isEqualTo(3);
        assertThat(slot.window()).isEqualTo(Duration.ofMinutes(5));
        assertThat(slot.rollups()).containsExactly(Rollup.HOURLY);
        assertThat(slot.attribution()).isFalse();
        assertThat(slot.tolerance("clicks")).isEqualTo(new Tolerance(new BigDecimal("0.001"), 2));
        assertThat(slot.tolerance("impressions")).isEqualTo(Tolerance.EXACT);
        assertThat(slot.line()).isEqualTo(8);

        MetricSet country = defs.set("channel_country").orElseThrow();
        assertThat(country.attribution()).isTrue();
        assertThat(country.window()).isEqualTo(Duration.ofMinutes(1));
        assertThat(country.rollups()).isEqualTo(EnumSet.allOf(Rollup.class));
        assertThat(country.measures().get(0).filters()).hasSize(2);
        assertThat(country.measures().get(1).field().name()).isEqualTo("quantity");
        assertThat(defs.longestWindow()).isEqualTo(Duration.ofMinutes(5));
    }

    @Test
    void onlyKeepsOneSetAndNamesTheOthersWhenTheNameIsUnknown() {
        MetricSets defs = parse(THREE_SETS);

        assertThat(defs.only("campaign_slot").sets())
                .extracting(MetricSet::name)
                .containsExactly("campaign_slot");
        assertThatThrownBy(() -> defs.only("nope"))
                .isInstanceOf(ConfigException.class)
                .hasMessage("no metric set named 'nope' in sets.yaml; its sets are"
                        + " [default, campaign_slot, channel_country]");
    }

    @Test
    void theFingerprintIsWhatMayNotChangeInPlace() {
        MetricSet before = parse(THREE_SETS).set("campaign_slot").orElseThrow();
        MetricSet newTolerance = parse(THREE_SETS.replace("relative: 0.001", "relative: 0.5"))
                .set("campaign_slot")
                .orElseThrow();
        MetricSet newWindow = parse(THREE_SETS.replace("window: 5m", "window: 1m"))
                .set("campaign_slot")
                .orElseThrow();
        MetricSet newFilter = parse(THREE_SETS.replace("where: {event_type: click}", "where: {event_type: conversion}"))
                .set("campaign_slot")
                .orElseThrow();

        assertThat(newTolerance.fingerprint()).isEqualTo(before.fingerprint());
        assertThat(newWindow.fingerprint()).isEqualTo(before.fingerprint());
        assertThat(newFilter.fingerprint()).isNotEqualTo(before.fingerprint());
        assertThat(before.fingerprint())
                .isEqualTo("{\"dimensions\":[\"campaign_id\",\"slot_id\"],\"measures\":["
                        + "{\"name\":\"impressions\",\"kind\":\"count\",\"where\":{\"event_type\":[\"impression\"]}},"
                        + "{\"name\":\"clicks\",\"kind\":\"count\",\"where\":{\"event_type\":[\"click\"]}},"
                        + "{\"name\":\"spend_micros\",\"kind\":\"sum\",\"field\":\"cost_micros\",\"where\":{}},"
                        + "{\"name\":\"events\",\"kind\":\"count\",\"where\":{}}]}");
    }

    // ---- bad definitions: one message naming the file, the line and the rule ---------------------------------------

    private static void refused(String yaml, String message) {
        assertThatThrownBy(() -> parse(yaml))
                .isInstanceOf(DefinitionException.class)
                .hasMessage(message);
    }

    private static final String HEAD = "version: 1\nattributes:\n  slot_id: {type: string, default: none}\nsets:\n";

    @Test
    void anUnknownFieldIsNamedWithTheFieldsThereAre() {
        refused(
                HEAD + "  - name: s\n    dimensions: [campaign_id, slot]\n"
                        + "    measures: [{name: n, kind: count}]\n",
                "sets.yaml:6: set s.dimensions[1]: unknown field 'slot': events have [event_id, event_type, event_ts,"
                        + " campaign_id, channel_id, cost_micros, request_id, slot_id] (declare an attribute under"
                        + " `attributes` to use another field)");
    }

    @Test
    void aDuplicateSetNameIsRefusedAtTheSecond() {
        String set = "  - name: s\n    dimensions: [campaign_id]\n    measures: [{name: n, kind: count}]\n";
        refused(HEAD + set + set, "sets.yaml:8: set s.name: duplicate name: a set named s is declared above");
    }

    @Test
    void aDuplicateMeasureOrAMeasureNamedLikeADimensionIsRefused() {
        refused(
                HEAD + "  - name: s\n    dimensions: [campaign_id]\n    measures:\n"
                        + "      - {name: n, kind: count}\n      - {name: n, kind: count}\n",
                "sets.yaml:9: set s.measures[1].name: duplicate name: n is already a dimension or measure of this set");
        refused(
                HEAD + "  - name: s\n    dimensions: [campaign_id]\n    measures:\n"
                        + "      - {name: campaign_id, kind: count}\n",
                "sets.yaml:8: set s.measures[0].name: duplicate name: campaign_id is already a dimension or measure of"
                        + " this set");
    }

    @Test
    void aSumOverAFieldThatIsNotAnIntegerIsRefused() {
        refused(
                HEAD + "  - name: s\n    dimensions: [campaign_id]\n    measures:\n"
                        + "      - {name: n, kind: sum, field: slot_id}\n",
                "sets.yaml:8: set s.measures[0].field: a sum over slot_id, which is not an integer field: sums add up"
                        + " cost_micros or integer attributes");
    }

    @Test
    void aRatioOverAnUnknownMeasureIsRefused() {
        refused(
                HEAD + "  - name: s\n    dimensions: [campaign_id]\n    measures: [{name: n, kind: count}]\n"
                        + "    ratios:\n      - {name: r, numerator: n, denominator: clicks}\n",
                "sets.yaml:9: set s.ratios[0].denominator: a ratio over an unknown measure: clicks is not a measure of"
                        + " this set [events, n]");
    }

    @Test
    void namesThatWouldBeSqlIdentifiersMustBeStrictOnes() {
        refused(
                HEAD
                        + "  - name: Campaign-Slot\n    dimensions: [campaign_id]\n    measures: [{name: n, kind: count}]\n",
                "sets.yaml:5: set Campaign-Slot.name: 'Campaign-Slot' is not a strict SQL identifier: a lower-case letter, then"
                        + " lower-case letters, digits and _ ([a-z][a-z0-9_]*)");
        refused(
                HEAD + "  - name: a_set_name_far_too_long_x\n    dimensions: [campaign_id]\n"
                        + "    measures: [{name: n, kind: count}]\n",
                "sets.yaml:5: set a_set_name_far_too_long_x.name: 'a_set_name_far_too_long_x' is 25 characters long;"
                        + " at most 24 are allowed");
        refused(
                HEAD + "  - name: a__b\n    dimensions: [campaign_id]\n    measures: [{name: n, kind: count}]\n",
                "sets.yaml:5: set a__b.name: 'a__b' may not contain '__' or end with '_': it prefixes the set's tables"
                        + " as a__b__<table>");
        refused(
                HEAD + "  - name: s\n    dimensions: [campaign_id]\n    measures: [{name: \"n; drop table x\", kind:"
                        + " count}]\n",
                "sets.yaml:7: set s.measures[0].name: 'n; drop table x' is not a strict SQL identifier: a lower-case"
                        + " letter, then lower-case letters, digits and _ ([a-z][a-z0-9_]*)");
        refused(
                "version: 1\nattributes:\n  Slot: {type: string, default: x}\nsets: []\n",
                "sets.yaml:3: attributes.Slot: 'Slot' is not a strict SQL identifier: a lower-case letter, then"
                        + " lower-case letters, digits and _ ([a-z][a-z0-9_]*)");
    }

    @Test
    void namesOfTheTablesOwnColumnsAreRefused() {
        refused(
                HEAD + "  - name: s\n    dimensions: [campaign_id]\n    measures: [{name: revision, kind: count}]\n",
                "sets.yaml:7: set s.measures[0].name: 'revision' is a column every set's tables already have; choose"
                        + " another name");
        refused(
                HEAD + "  - name: s\n    dimensions: [campaign_id]\n    measures: [{name: batch_n, kind: count}]\n",
                "sets.yaml:7: set s.measures[0].name: 'batch_n' starts with batch_, which the comparison's columns"
                        + " use; choose another name");
    }

    @Test
    void theSchemaRefusesUnknownKeysWrongKindsAndMissingParts() {
        refused(
                HEAD + "  - name: s\n    dimensions: [campaign_id]\n    measures: [{name: n, kind: count}]\n"
                        + "    colour: red\n",
                "sets.yaml:8: set s.colour: is not defined in the schema and the schema does not allow additional"
                        + " properties (schema dev/recount/core/sets/metric-sets.schema.json)");
        refused(
                HEAD + "  - name: s\n    dimensions: [campaign_id]\n    measures: [{name: n, kind: avg}]\n",
                "sets.yaml:7: set s.measures[0].kind: does not have a value in the enumeration [count, sum] (schema"
                        + " dev/recount/core/sets/metric-sets.schema.json)");
        refused(
                HEAD + "  - name: s\n    measures: [{name: n, kind: count}]\n",
                "sets.yaml:5: set s.dimensions: is missing but it is required (schema"
                        + " dev/recount/core/sets/metric-sets.schema.json)");
    }

    @Test
    void yamlErrorsAndRepeatedKeysNameTheirLine() {
        refused(
                "version: 1\nsets:\n  - name: [unclosed\n",
                "sets.yaml:3: not valid YAML: while parsing a flow sequence; expected ',' or ']', but got <stream end>");
        refused(
                HEAD
                        + "  - name: s\n    name: t\n    dimensions: [campaign_id]\n    measures: [{name: n, kind: count}]\n",
                "sets.yaml:6: key 'name' is given twice");
    }

    @Test
    void theDefaultSetKeepsItsBuiltInMeasures() {
        refused(
                "version: 1\nsets:\n  - name: default\n    measures: [{name: n, kind: count}]\n",
                "sets.yaml:4: set default.measures: the default set keeps today's tables, so its measures are built"
                        + " in; name only `- name: default` (with window, attribution or tolerance), and declare"
                        + " another set for other measures");
    }

    @Test
    void windowsMustDivideADayAndFiltersMustBeAbleToMatch() {
        refused(
                HEAD + "  - name: s\n    dimensions: [campaign_id]\n    measures: [{name: n, kind: count}]\n"
                        + "    window: 7m\n",
                "sets.yaml:8: set s.window: window 7m must divide a day (e.g. 30s, 1m, 5m, 15m, 1h, 1d), so that the"
                        + " days nightly recomputes hold whole windows");
        refused(
                HEAD + "  - name: s\n    dimensions: [campaign_id]\n"
                        + "    measures: [{name: n, kind: count, where: {event_type: tap}}]\n",
                "sets.yaml:7: set s.measures[0].where.event_type: event_type 'tap' is not one of impression, click,"
                        + " conversion");
        refused(
                "version: 1\nattributes:\n  country: {type: string, values: [DE], default: DE}\nsets:\n"
                        + "  - name: s\n    dimensions: [campaign_id]\n"
                        + "    measures: [{name: n, kind: count, where: {country: FR}}]\n",
                "sets.yaml:7: set s.measures[0].where.country: 'FR' is not one of the values attribute country"
                        + " declares, [DE]: the filter could never match");
        refused(
                HEAD + "  - name: s\n    dimensions: [campaign_id]\n"
                        + "    measures: [{name: n, kind: count, where: {cost_micros: '5'}}]\n",
                "sets.yaml:7: set s.measures[0].where.cost_micros: a filter on cost_micros, which is not a string"
                        + " field: filters compare event_type, ids or string attributes with listed values");
    }

    @Test
    void attributesNeedARequiredOrADefaultOfTheirType() {
        refused(
                "version: 1\nattributes:\n  slot_id: {type: string}\nsets: []\n",
                "sets.yaml:3: attributes.slot_id: an attribute is either `required: true` (absent: a schema dead"
                        + " letter) or has a `default`, not neither");
        refused(
                "version: 1\nattributes:\n  quantity: {type: integer, default: -1}\nsets: []\n",
                "sets.yaml:3: attributes.quantity.default: the default of an integer attribute is a whole number in"
                        + " [0, 2^63)");
        refused(
                "version: 1\nattributes:\n  event_type: {type: string, default: x}\nsets: []\n",
                "sets.yaml:3: attributes.event_type: 'event_type' is a contract field; attributes are the fields"
                        + " beyond [event_id, event_type, event_ts, campaign_id, channel_id, cost_micros, request_id]");
        refused(
                HEAD.replace("slot_id", "request") + "  - name: s\n    dimensions: [request_id]\n"
                        + "    measures: [{name: n, kind: count}]\n",
                "sets.yaml:6: set s.dimensions[0]: request_id identifies single events; a dimension of it would make"
                        + " one row per event");
    }

    @Test
    void aSettingNamesTheFileAndAMissingFileIsABadSetting() {
        assertThatThrownBy(() -> MetricSets.fromConfig(CONFIG.with(MetricSets.FILE_SETTING, "/nonexistent/sets.yaml")))
                .isInstanceOf(ConfigException.class)
                .hasMessage("setting metric-sets.file: no such file /nonexistent/sets.yaml");
    }

    @Test
    void theShippedDefinitionsFileIsTheBuiltInOne() throws Exception {
        String shipped = java.nio.file.Files.readString(java.nio.file.Path.of("../config/metric-sets.yaml"));
        assertThat(parse(shipped).sets()).isEqualTo(MetricSets.defaults().sets());
        assertThat(List.of(shipped.split("\n"))).anyMatch(l -> l.equals("  - name: default"));
    }
}
