package dev.recount.db;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.StreamWindowMetricsTable;
import dev.recount.db.tables.WindowRow;
import dev.recount.db.tables.WindowSizes;
import dev.recount.testkit.DefaultSet;
import dev.recount.testkit.LocalStack;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The window-by-window size check `backfill affected` and the reconciler use for an affected run's windows, read as
 * the batch login (which may read only the stream table's window columns): a row of another size that starts or ends
 * inside a window is found, rows outside the windows named are not read.
 */
class WindowSizesITCase {
    private static final StreamWindowMetricsTable STREAM_TABLE = new StreamWindowMetricsTable(DefaultSet.TABLES);

    static final long MINUTE = 60_000;
    static final long T = Instant.parse("2026-11-28T10:00:00Z").toEpochMilli();

    @Test
    void rowsOfAnotherSizeStartingOrEndingInsideAWindowAreFoundAndOthersAreNot() throws SQLException {
        LocalStack stack = LocalStack.shared();
        String schema = stack.createMigratedSchema("sizes");
        try (Connection admin = MigratedSchemas.admin(stack, schema)) {
            stream(admin, T, T + MINUTE); // the configured size
            stream(admin, T + 10 * MINUTE, T + 15 * MINUTE); // 5 minutes, 10:10-10:15
            stream(admin, T + 30 * MINUTE, T + 32 * MINUTE); // 2 minutes, 10:30-10:32, far from every window asked
        }
        try (Connection batch = stack.loginConnection(schema, Role.BATCH)) {
            List<Long> asked = List.of(
                    T, // only rows of its size
                    T + 10 * MINUTE, // the 5-minute row starts in it
                    T + 14 * MINUTE, // it ends in it
                    T + 12 * MINUTE, // inside it: neither starts nor ends there (not seen, as documented)
                    T + 20 * MINUTE); // nothing at all

            assertThat(WindowSizes.windowsHoldingOtherSizes(batch, StreamWindowMetricsTable.TABLE, asked, MINUTE))
                    .containsExactly(T + 10 * MINUTE, T + 14 * MINUTE);
        }
    }

    private static void stream(Connection c, long start, long end) throws SQLException {
        STREAM_TABLE.upsert(
                c,
                List.of(new StreamWindowMetricsTable.Row(
                        new WindowRow(WindowKey.of(start, "c1", "ch1"), end, DefaultSet.values(1, 0, 0, 1, 1)), 1)));
    }
}
