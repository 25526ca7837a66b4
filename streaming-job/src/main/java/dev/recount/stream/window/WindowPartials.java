package dev.recount.stream.window;

import dev.recount.core.event.AdEvent;
import dev.recount.core.metrics.MetricsAccumulator;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;

/**
 * Local pre-aggregation (what Flink SQL calls the local phase of local-global aggregation): the de-dup operator adds
 * each unique, on-time event to a partial sum per (window, campaign, channel) and sends the partial sums on instead
 * of the events. The second shuffle and the window operator then see one record per window key and de-dup subtask
 * instead of one per event.
 *
 * <p>The rule that keeps the window operator's results exact: a window's partials leave <em>before</em> the
 * watermark that fires the window ({@link #takeFiredBy}, called before the watermark is forwarded), so the first
 * firing holds every on-time event, as it did when events travelled one by one. Events for a window that has
 * fired already are not buffered at all (the caller sends them on at once, one partial each), so each still
 * re-fires its window with revision + 1. When more than {@code maxKeys} sums are buffered, all of them leave
 * early ({@link #takeAll}): that is always allowed — the window operator just adds sooner — and bounds the memory.
 *
 * <p>What is buffered at a checkpoint is part of the operator's state ({@link #snapshot}, {@link #restore}).
 */
public final class WindowPartials {
    private final long windowMillis;
    private final int maxKeys;
    /** Window start → (campaign, channel) → sums. Ordered, so the windows a watermark fires are a prefix. */
    private final TreeMap<Long, Map<Key, MetricsAccumulator>> windows = new TreeMap<>();

    private int keys;
    /** The map of the window the last event went to: consecutive events mostly share a window. */
    private long lastWindowStart = Long.MIN_VALUE;

    private Map<Key, MetricsAccumulator> lastWindow;
    private final Key probe = new Key(null, null);

    public WindowPartials(long windowMillis, int maxKeys) {
        if (windowMillis <= 0) throw new IllegalArgumentException("windowMillis must be positive, got " + windowMillis);
        if (maxKeys < 1) throw new IllegalArgumentException("maxKeys must be >= 1, got " + maxKeys);
        this.windowMillis = windowMillis;
        this.maxKeys = maxKeys;
    }

    /** Adds {@code event} to its window key's sum; true when the buffer is over its size and should be emptied. */
    public boolean add(long windowStart, AdEvent event) {
        Map<Key, MetricsAccumulator> window;
        if (windowStart == lastWindowStart && lastWindow != null) {
            window = lastWindow;
        } else {
            window = windows.computeIfAbsent(windowStart, w -> new HashMap<>());
            lastWindowStart = windowStart;
            lastWindow = window;
        }
        probe.campaignId = event.campaignId;
        probe.channelId = event.channelId;
        MetricsAccumulator sums = window.get(probe);
        if (sums == null) {
            sums = new MetricsAccumulator();
            window.put(new Key(event.campaignId, event.channelId), sums);
            keys++;
        }
        sums.add(event);
        return keys > maxKeys;
    }

    /** Removes and hands over the partials of every window whose last millisecond is at or before {@code watermark}. */
    public void takeFiredBy(long watermark, Consumer<WindowPartial> out) {
        // window start + size - 1 <= watermark  <=>  window start <= watermark - size + 1 (no overflow for real times)
        if (watermark < Long.MIN_VALUE + windowMillis) return; // no window's last millisecond is that early
        long lastFired = watermark == Long.MAX_VALUE ? Long.MAX_VALUE : watermark - windowMillis + 1;
        Iterator<Map.Entry<Long, Map<Key, MetricsAccumulator>>> it =
                windows.entrySet().iterator();
        while (it.hasNext()) {
            Map.Entry<Long, Map<Key, MetricsAccumulator>> w = it.next();
            if (w.getKey() > lastFired) break;
            emit(w.getKey(), w.getValue(), out);
            it.remove();
        }
        forgetLastWindow();
    }

    /** Removes and hands over every buffered partial. */
    public void takeAll(Consumer<WindowPartial> out) {
        for (Map.Entry<Long, Map<Key, MetricsAccumulator>> w : windows.entrySet()) emit(w.getKey(), w.getValue(), out);
        windows.clear();
        forgetLastWindow();
    }

    private void emit(long windowStart, Map<Key, MetricsAccumulator> window, Consumer<WindowPartial> out) {
        for (Map.Entry<Key, MetricsAccumulator> e : window.entrySet()) {
            out.accept(new WindowPartial(windowStart, e.getKey().campaignId, e.getKey().channelId, e.getValue(), null));
        }
        keys -= window.size();
    }

    private void forgetLastWindow() {
        lastWindowStart = Long.MIN_VALUE;
        lastWindow = null;
    }

    /** How many (window, campaign, channel) sums are buffered. */
    public int size() {
        return keys;
    }

    /** The buffered partials, for a checkpoint (the buffer keeps them). */
    public List<WindowPartial> snapshot() {
        List<WindowPartial> all = new ArrayList<>(keys);
        for (Map.Entry<Long, Map<Key, MetricsAccumulator>> w : windows.entrySet()) {
            for (Map.Entry<Key, MetricsAccumulator> e : w.getValue().entrySet()) {
                all.add(new WindowPartial(w.getKey(), e.getKey().campaignId, e.getKey().channelId, e.getValue(), null));
            }
        }
        return all;
    }

    /** Adds a partial restored from a checkpoint. */
    public void restore(WindowPartial p) {
        Map<Key, MetricsAccumulator> window = windows.computeIfAbsent(p.windowStart, w -> new HashMap<>());
        MetricsAccumulator sums = window.get(new Key(p.campaignId, p.channelId));
        if (sums == null) {
            window.put(new Key(p.campaignId, p.channelId), new MetricsAccumulator().merge(p.totals));
            keys++;
        } else {
            sums.merge(p.totals);
        }
        forgetLastWindow();
    }

    /** (campaign, channel); mutable only as the lookup probe, never once it is a map key. */
    private static final class Key {
        String campaignId;
        String channelId;

        Key(String campaignId, String channelId) {
            this.campaignId = campaignId;
            this.channelId = channelId;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && campaignId.equals(k.campaignId) && channelId.equals(k.channelId);
        }

        @Override
        public int hashCode() {
            return 31 * campaignId.hashCode() + channelId.hashCode();
        }
    }

    @Override
    public String toString() {
        return "WindowPartials{" + keys + " sums in " + windows.size() + " windows}";
    }
}
