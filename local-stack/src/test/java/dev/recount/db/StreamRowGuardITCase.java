package dev.recount.db;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.StreamProgressTable;
import dev.recount.db.tables.StreamRejectedRowsTable;
import dev.recount.db.tables.StreamWindowMetricsTable;
import dev.recount.db.tables.StreamWindowMetricsTable.Row;
import dev.recount.db.tables.WindowRow;
import dev.recount.testkit.DefaultSet;
import dev.recount.testkit.LocalStack;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The stream table's guard and the restart bookkeeping on a real PostgreSQL: a stored row is replaced only by a later
 * firing with at least as many events; the same row again is "not applied", never an error; the last commit is
 * readable per lineage; refused rows are recorded once.
 */
class StreamRowGuardITCase {
    private static final StreamWindowMetricsTable STREAM_TABLE = new StreamWindowMetricsTable(DefaultSet.TABLES);

    private static final long W0 = Instant.parse("2026-11-29T10:00:00Z").toEpochMilli();
    private final LocalStack stack = LocalStack.shared();
    private String schema;

    @BeforeEach
    void freshSchema() {
        schema = stack.createSchema("guard");
        Migrations.apply(stack.jdbcUrl(), stack.adminUser(), stack.adminPassword(), schema);
    }

    private Connection connection() throws SQLException {
        Connection c = stack.adminConnection();
        c.setSchema(schema);
        return c;
    }

    private static Row row(long events, int revision) {
        return new Row(
                new WindowRow(
                        WindowKey.of(W0, "c1", "web"),
                        W0 + 60_000,
                        DefaultSet.values(events, 0, 0, 10 * events, events)),
                revision);
    }

    private static long storedEvents(Connection c) throws SQLException {
        return STREAM_TABLE
                .readRange(c, W0, W0 + 60_000)
                .get(0)
                .window()
                .values()
                .count(DefaultSet.EVENTS);
    }

    @Test
    void aLaterFiringWithFewerEventsNeverReplacesAFullerRow() throws SQLException {
        try (Connection c = connection()) {
            assertThat(STREAM_TABLE.upsert(c, List.of(row(25, 1)))).isEmpty();
            // A window re-opened with empty state after its full row was written: revision 1 again, 1 event.
            assertThat(STREAM_TABLE.upsert(c, List.of(row(1, 1)))).containsExactly(row(1, 1));
            // Even at a higher revision, fewer events never win.
            assertThat(STREAM_TABLE.upsert(c, List.of(row(2, 2)))).containsExactly(row(2, 2));
            assertThat(storedEvents(c)).isEqualTo(25);
            // The same row again (a re-commit after a restore) is not applied and changes nothing.
            assertThat(STREAM_TABLE.upsert(c, List.of(row(25, 1)))).containsExactly(row(25, 1));
            // A real later firing: higher revision, more events.
            assertThat(STREAM_TABLE.upsert(c, List.of(row(26, 2)))).isEmpty();
            assertThat(storedEvents(c)).isEqualTo(26);
            assertThat(STREAM_TABLE.read(c, List.of(row(0, 1).window().key()))).containsValue(row(26, 2));
        }
    }

    private static Row row(String campaign, long events, int revision) {
        return new Row(
                new WindowRow(
                        WindowKey.of(W0, campaign, "web"),
                        W0 + 60_000,
                        DefaultSet.values(events, 0, 0, 10 * events, events)),
                revision);
    }

    /**
     * In a transaction (as the committer writes) a chunk of rows is one statement; when the guard refuses some of them
     * the chunk is written again row by row, and exactly the refused rows are named, in input order. A key named twice
     * in one call is written row by row too, in order.
     */
    @Test
    void inATransactionTheRowsTheGuardRefusesAreNamedAsRowByRow() throws SQLException {
        try (Connection c = connection()) {
            c.setAutoCommit(false);
            assertThat(STREAM_TABLE.upsert(c, List.of(row("a", 25, 1), row("b", 5, 1))))
                    .isEmpty();
            c.commit();
            assertThat(STREAM_TABLE.upsert(c, List.of(row("a", 25, 1), row("b", 6, 2), row("c", 1, 1), row("d", 3, 1))))
                    .containsExactly(row("a", 25, 1));
            assertThat(STREAM_TABLE.upsert(c, List.of(row("d", 3, 1), row("a", 24, 2))))
                    .containsExactly(row("d", 3, 1), row("a", 24, 2));
            assertThat(STREAM_TABLE.upsert(c, List.of(row("e", 3, 1), row("e", 4, 2))))
                    .isEmpty();
            c.commit();
            assertThat(STREAM_TABLE.readRange(c, W0, W0 + 60_000))
                    .extracting(r -> r.window().key().dimension(0) + ":"
                            + r.window().values().count(DefaultSet.EVENTS) + ":" + r.revision())
                    .containsExactly("a:25:1", "b:6:2", "c:1:1", "d:3:1", "e:4:2");
        }
    }

    @Test
    void theLastCommitIsReadBackWithItsLineage() throws SQLException {
        try (Connection c = connection()) {
            assertThat(StreamProgressTable.committed(c, "job")).isEmpty();
            StreamProgressTable.advance(c, "job", W0, 7, "lineage-a");
            StreamProgressTable.advance(c, "job", W0 - 1, 9, "lineage-a");
            assertThat(StreamProgressTable.committed(c, "job"))
                    .contains(new StreamProgressTable.Committed("lineage-a", 9));
        }
    }

    @Test
    void aRefusedRowIsRecordedOnceAndReadInIdOrder() throws SQLException {
        try (Connection c = connection()) {
            c.setAutoCommit(false);
            StreamRejectedRowsTable.lock(c);
            assertThat(StreamRejectedRowsTable.insert(c, "k1", "{\"a\":\"\\u0000\"}", "22021", "bad"))
                    .isTrue();
            assertThat(StreamRejectedRowsTable.insert(c, "k1", "{}", "22021", "again"))
                    .isFalse();
            assertThat(StreamRejectedRowsTable.insert(c, "k2", "{}", "23514", "check"))
                    .isTrue();
            c.commit();
            assertThat(StreamRejectedRowsTable.after(c, 0))
                    .extracting(StreamRejectedRowsTable.Rejected::sqlState)
                    .containsExactly("22021", "23514");
            long first = StreamRejectedRowsTable.after(c, 0).get(0).rejectionId();
            assertThat(StreamRejectedRowsTable.after(c, first)).hasSize(1);
            assertThat(StreamRejectedRowsTable.identity(c)).startsWith("stream_rejected_rows@");
        }
    }
}
