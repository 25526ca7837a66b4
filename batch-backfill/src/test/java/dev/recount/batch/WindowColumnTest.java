package dev.recount.batch;

import static org.apache.spark.sql.functions.col;
import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.batch.testutils.SharedSpark;
import dev.recount.core.window.WindowAlignment;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.Test;

/**
 * The SQL window-start expression (core's {@link WindowAlignment#sqlWindowStart}, the text the benchmarks also run in
 * DuckDB) must map every event time to the window WindowAlignment does: negative, zero, on and beside boundaries,
 * and near both ends of the long range.
 */
class WindowColumnTest {
    private static final long T0 = Instant.parse("2026-11-28T10:00:00Z").toEpochMilli();
    private static final long PRE_EPOCH =
            Instant.parse("1969-12-31T23:59:30.500Z").toEpochMilli();

    @Test
    void sqlWindowStartEqualsWindowAlignmentAtBoundariesAndBeforeTheEpoch() {
        // 30 days: a size beyond int, so the SQL literal is a bigint.
        long[] sizes = {1, 1_000, 60_000, 7 * 60_000, 3_600_000, 86_400_000, 30L * 86_400_000};
        List<Long> times = new ArrayList<>();
        for (long size : sizes) {
            for (long base : new long[] {0, T0, PRE_EPOCH, -size, 5 * size, -5 * size}) {
                for (long delta : new long[] {-size - 1, -size, -1, 0, 1, size - 1, size, size + 1}) {
                    times.add(base + delta);
                }
            }
        }
        times.add(Long.MAX_VALUE / 2);
        times.add(-(Long.MAX_VALUE / 2));
        times.add(Long.MAX_VALUE);
        times.add(Long.MAX_VALUE - 1);
        // The lowest times whose window start is still a long for every size (Math.floorDiv(ts, size) * size).
        times.add(Long.MIN_VALUE + 30L * 86_400_000);

        for (long size : sizes) {
            WindowAlignment windows = new WindowAlignment(size);
            List<Row> rows = SharedSpark.session()
                    .createDataset(times, Encoders.LONG())
                    .toDF("ts")
                    .select(
                            col("ts"),
                            WindowAggregation.windowStart("ts", windows).as("start"))
                    .collectAsList();
            assertThat(rows).hasSize(times.size());
            for (Row r : rows) {
                long ts = r.getLong(0);
                assertThat(r.getLong(1))
                        .as("window start of %s with size %s", ts, size)
                        .isEqualTo(windows.windowStart(ts));
            }
        }
    }
}
