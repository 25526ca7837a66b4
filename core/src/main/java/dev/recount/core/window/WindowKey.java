package dev.recount.core.window;

import java.io.Serializable;
import java.util.Objects;

/** The key of one metrics row: {@code (window_start, campaign_id, channel_id)} (CONTRACT §2). */
public record WindowKey(long windowStartMillis, String campaignId, String channelId) implements Serializable {
    public WindowKey {
        Objects.requireNonNull(campaignId, "campaignId");
        Objects.requireNonNull(channelId, "channelId");
    }
}
