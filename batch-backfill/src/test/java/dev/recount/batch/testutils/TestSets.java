package dev.recount.batch.testutils;

import dev.recount.core.config.RecountConfig;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;

/** Metric set definitions the tests share. */
public final class TestSets {
    /**
     * Three sets over three declared attributes: the default set; campaign x slot_id (a string attribute with any id)
     * in 5-minute windows with a filtered count and a sum of cost; channel x country (an attribute with listed
     * values) with a filtered count and a sum of the integer attribute quantity.
     */
    public static final String THREE_SETS = """
            version: 1
            attributes:
              slot_id: {type: string, default: none}
              country: {type: string, values: [DE, FR, GB, US, other], default: other}
              quantity: {type: integer, default: 0}
            sets:
              - name: default
              - name: campaign_slot
                dimensions: [campaign_id, slot_id]
                measures:
                  - {name: impressions, kind: count, where: {event_type: impression}}
                  - {name: spend_micros, kind: sum, field: cost_micros}
                window: 5m
              - name: channel_country
                dimensions: [channel_id, country]
                measures:
                  - {name: clicks, kind: count, where: {event_type: click}}
                  - {name: quantity, kind: sum, field: quantity}
            """;

    private TestSets() {}

    /** {@code yaml} read with the documented settings. */
    public static MetricSets parse(String yaml) {
        return MetricSets.parse(yaml, "test-sets.yaml", RecountConfig.defaults());
    }

    /** The default set, as built in. */
    public static MetricSet defaultSet() {
        return MetricSets.defaults().defaultSet().orElseThrow();
    }
}
