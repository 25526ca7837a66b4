package dev.recount.stream;

import dev.recount.core.config.EventTimeSettings;
import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventType;
import java.time.Duration;
import java.time.Instant;

/** Named instants and small factories shared by the tests. Never the wall clock. */
public final class Fixtures {
    /** The start of window W0 = [10:00, 10:01). */
    public static final Instant W0 = Instant.parse("2026-11-29T10:00:00Z");

    public static final Instant W1 = W0.plusSeconds(60);
    public static final Instant W2 = W0.plusSeconds(120);
    public static final Instant W3 = W0.plusSeconds(180);

    /** 1 min windows, 5 s out-of-orderness, 1 min allowed lateness, 1 s idleness, horizon = the minimum (2 min 5 s). */
    public static final EventTimeSettings SETTINGS = EventTimeSettings.defaults()
            .withWindowSize(Duration.ofMinutes(1))
            .withOutOfOrderness(Duration.ofSeconds(5))
            .withAllowedLateness(Duration.ofMinutes(1))
            .withIdleness(Duration.ofSeconds(1));

    public static final String TOPIC = "ad-events-test";

    private Fixtures() {}

    public static long ms(Instant t) {
        return t.toEpochMilli();
    }

    /** An event read at offset {@code offset} of partition 0, with a record timestamp 1 s after its event time. */
    public static AdEvent event(
            String id,
            EventType type,
            Instant eventTime,
            String campaign,
            String channel,
            long costMicros,
            long offset) {
        return new AdEvent(
                id,
                type,
                eventTime.toEpochMilli(),
                campaign,
                channel,
                costMicros,
                TOPIC,
                0,
                offset,
                eventTime.toEpochMilli() + 1000);
    }

    public static AdEvent click(String id, Instant eventTime, long offset) {
        return event(id, EventType.CLICK, eventTime, "camp-a", "search", 250_000, offset);
    }

    public static AdEvent impression(String id, Instant eventTime, long offset) {
        return event(id, EventType.IMPRESSION, eventTime, "camp-a", "search", 1_000, offset);
    }
}
