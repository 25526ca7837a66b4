package dev.recount.bench.kstreams;

import dev.recount.core.event.AdEvent;

/**
 * The aggregation key (campaign, channel) as one string, so Kafka Streams' String serde carries it. Ids cannot hold
 * control characters (contract §1), so the unit separator U+001F between them is unambiguous.
 */
final class CampaignChannel {
    private static final char SEPARATOR = '\u001F';

    private CampaignChannel() {}

    static String of(AdEvent e) {
        return e.campaignId + SEPARATOR + e.channelId;
    }

    static String campaign(String key) {
        return key.substring(0, key.indexOf(SEPARATOR));
    }

    static String channel(String key) {
        return key.substring(key.indexOf(SEPARATOR) + 1);
    }
}
