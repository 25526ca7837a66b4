package dev.recount.batch;

import dev.recount.core.lake.LakeLayout;
import dev.recount.core.time.Wait;
import dev.recount.db.tables.LakeArchivedRowsTable;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lake hours that hold fewer rows than the stream archived into them ({@code lake_archived_rows}, V24): files
 * lost, deleted or not yet committed. Recomputing such an hour would make final a total that is too low — batch wins
 * — so a backfill refuses it unless forced.
 *
 * <p>The stream commits an hour's files and its counts apart, each when the same checkpoint completes, so the counts
 * can be visible a moment before the files (or, if the job died between the two, until it runs again and commits
 * the files). The counts are therefore read first and the lake counted after; a shortfall is counted again until
 * {@code batch.lake-check-wait} has passed, and only one that stays is reported. An hour may hold more rows than
 * recorded (files from before V24, or written by other means): only fewer is a loss.
 */
final class LakeShortfall {
    private static final Logger LOG = LoggerFactory.getLogger(LakeShortfall.class);
    private static final Duration RECOUNT_EVERY = Duration.ofSeconds(2);
    private static final int HOURS_NAMED = 5;

    /** One short hour: its start, the rows its files hold, the rows the stream archived into it. */
    record Hour(long startMillis, long inLake, long archived) {
        @Override
        public String toString() {
            return "hour " + Instant.ofEpochMilli(startMillis) + " holds " + inLake + " rows, the stream archived "
                    + archived;
        }
    }

    private LakeShortfall() {}

    /** The hours of {@code archived} whose count in {@code inLake} is lower (absent counts as 0). */
    static List<Hour> compare(Map<Long, Long> inLake, SortedMap<Long, Long> archived) {
        List<Hour> hours = new ArrayList<>();
        archived.forEach((hour, n) -> {
            long held = inLake.getOrDefault(hour, 0L);
            if (held < n) hours.add(new Hour(hour, held, n));
        });
        return hours;
    }

    /** The whole hours that {@code ranges} touch, as one range of hour starts per range. */
    static List<TimeRange> hoursOf(List<TimeRange> ranges) {
        List<TimeRange> hours = new ArrayList<>();
        for (TimeRange r : ranges) {
            hours.add(new TimeRange(
                    LakeLayout.hourStart(r.fromMillis()),
                    LakeLayout.hourStart(r.toMillis() - 1) + LakeLayout.HOUR_MILLIS));
        }
        return hours;
    }

    /** What the stream recorded as archived into each hour that {@code ranges} touch (hours without any absent). */
    static SortedMap<Long, Long> archived(Connection conn, List<TimeRange> ranges) throws SQLException {
        SortedMap<Long, Long> archived = new TreeMap<>();
        for (TimeRange h : hoursOf(ranges)) {
            archived.putAll(LakeArchivedRowsTable.rowsByHour(conn, h.fromMillis(), h.toMillis()));
        }
        return archived;
    }

    /**
     * The short hours among those {@code ranges} touch: {@link #find(SortedMap, Map, Function, Duration)} with
     * nothing known of the lake yet.
     */
    static List<Hour> find(
            Connection conn,
            List<TimeRange> ranges,
            Function<List<TimeRange>, SortedMap<Long, Long>> lakeRows,
            Duration wait)
            throws SQLException {
        return find(archived(conn, ranges), Map.of(), lakeRows, wait);
    }

    /**
     * The hours of {@code archived} that hold fewer rows, after counting them again for up to {@code wait}.
     *
     * @param known    rows per hour the caller already counted in the lake (a recompute of whole hours sums them for
     *                 free); only the hours it lacks, or that look short by it, are counted by {@code lakeRows}
     * @param lakeRows counts the lake's rows per hour of the given hour ranges ({@link LakeReader#rowsByHour}), in a
     *                 listing of the lake made after {@code archived} was read
     */
    static List<Hour> find(
            SortedMap<Long, Long> archived,
            Map<Long, Long> known,
            Function<List<TimeRange>, SortedMap<Long, Long>> lakeRows,
            Duration wait) {
        SortedMap<Long, Long> doubtful = new TreeMap<>();
        archived.forEach((hour, n) -> {
            Long held = known.get(hour);
            if (held == null || held < n) doubtful.put(hour, n);
        });
        if (doubtful.isEmpty()) return List.of();
        List<TimeRange> hours = new ArrayList<>();
        for (long hour : doubtful.keySet()) hours.add(new TimeRange(hour, hour + LakeLayout.HOUR_MILLIS));
        AtomicReference<List<Hour>> last = new AtomicReference<>(List.of());
        try {
            return Wait.upTo(wait)
                    .every(RECOUNT_EVERY)
                    .retry(
                            () -> {
                                last.set(compare(lakeRows.apply(hours), doubtful));
                                return last.get();
                            },
                            List::isEmpty,
                            (shortHours, pause) -> LOG.info(
                                    "{} lake hour(s) hold fewer rows than the stream archived into them ({});"
                                            + " counting again",
                                    shortHours.size(),
                                    shortHours.get(0)));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return last.get();
        }
    }

    /** One line naming the first few short hours. */
    static String describe(List<Hour> hours) {
        String named = hours.stream().limit(HOURS_NAMED).map(Hour::toString).collect(Collectors.joining("; "));
        return hours.size() > HOURS_NAMED ? named + "; and " + (hours.size() - HOURS_NAMED) + " more" : named;
    }
}
