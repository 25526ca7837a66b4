package dev.recount.reconcile.testutils;

import dev.recount.core.config.RecountConfig;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;

/**
 * Three metric sets as a deployment declares them: the default set; {@code campaign_slot} by campaign and a string
 * attribute {@code slot_id}, 5-minute windows, a CTR and a tolerance of its own on clicks; {@code channel_country} by
 * channel and an attribute {@code country}, with a filtered count, spend and a sum of an integer attribute, and
 * attribution.
 */
public final class ThreeSets {
    public static final String YAML = """
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
                tolerance:
                  clicks: {absolute: 1}
              - name: channel_country
                dimensions: [channel_id, country]
                measures:
                  - {name: eu_clicks, kind: count, where: {event_type: click, country: [DE, FR]}}
                  - {name: spend_micros, kind: sum, field: cost_micros}
                  - {name: units, kind: sum, field: quantity}
                attribution: true
            """;

    public static final MetricSets SETS = MetricSets.parse(YAML, "three-sets.yaml", RecountConfig.defaults());
    public static final MetricSet DEFAULT = SETS.set("default").orElseThrow();
    public static final MetricSet SLOT = SETS.set("campaign_slot").orElseThrow();
    public static final MetricSet COUNTRY = SETS.set("channel_country").orElseThrow();

    private ThreeSets() {}
}
