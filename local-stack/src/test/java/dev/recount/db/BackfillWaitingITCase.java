package dev.recount.db;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.db.tables.BackfillWaitingTable;
import dev.recount.db.tables.BackfillWaitingTable.Position;
import dev.recount.db.tables.BackfillWaitingTable.Waiting;
import dev.recount.db.tables.BatchRunsTable;
import dev.recount.testkit.LocalStack;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * backfill_waiting (V25) as the batch login uses it: what waits is kept once per record with the time it started
 * waiting, every record is checked again even when more wait than a run takes, and settled records go. And the run
 * that settles them is never recorded as failed once it succeeded.
 */
class BackfillWaitingITCase {
    static final String TOPIC = "late";

    Connection batch;

    @BeforeEach
    void setUp() throws SQLException {
        LocalStack stack = LocalStack.shared();
        batch = stack.loginConnection(stack.createMigratedSchema("waiting"), Role.BATCH);
    }

    @AfterEach
    void close() throws SQLException {
        batch.close();
    }

    @Test
    void aRecordKeptAgainKeepsWhenItStartedWaitingAndTakesTheNewReason() throws SQLException {
        BackfillWaitingTable.keep(batch, TOPIC, 1, List.of(waiting(0, 5, "not in the lake yet")));
        Optional<Long> since = BackfillWaitingTable.summary(batch, TOPIC).oldestSinceMillis();
        assertThat(since).isPresent();

        BackfillWaitingTable.keep(batch, TOPIC, 2, List.of(waiting(0, 5, "its lake hour is short")));

        assertThat(BackfillWaitingTable.load(batch, TOPIC, 10))
                .containsExactly(waiting(0, 5, "its lake hour is short"));
        BackfillWaitingTable.Summary summary = BackfillWaitingTable.summary(batch, TOPIC);
        assertThat(summary.records()).isEqualTo(1);
        assertThat(summary.oldestSinceMillis()).isEqualTo(since);
        assertThat(summary.oldestWaitingSeconds()).isNotNegative();
        assertThat(BackfillWaitingTable.summary(batch, "other")).isEqualTo(BackfillWaitingTable.Summary.NONE);
    }

    /** A run that settled some of a record's sets keeps it naming the others: the stored record is the new one. */
    @Test
    void aRecordKeptAgainHoldsWhatTheLastRunKept() throws SQLException {
        Position at = new Position(0, 7);
        BackfillWaitingTable.keep(batch, TOPIC, 1, List.of(new Waiting(at, "{\"sets\": [\"a\", \"b\"]}", "r")));
        BackfillWaitingTable.keep(batch, TOPIC, 2, List.of(new Waiting(at, "{\"sets\": [\"b\"]}", "r")));

        assertThat(BackfillWaitingTable.load(batch, TOPIC, 10))
                .extracting(w -> w.record().replace(" ", ""))
                .containsExactly("{\"sets\":[\"b\"]}");
    }

    @Test
    void runsTakeTheRecordsCheckedLeastRecentlyFirstSoThatEveryRecordIsCheckedAgain() throws SQLException {
        BackfillWaitingTable.keep(batch, TOPIC, 1, List.of(waiting(0, 1, "r"), waiting(0, 2, "r"), waiting(1, 1, "r")));

        // Each run takes two of the three and keeps them: the third is first in line for the next run.
        List<Waiting> first = BackfillWaitingTable.load(batch, TOPIC, 2);
        assertThat(first).extracting(Waiting::position).containsExactly(new Position(0, 1), new Position(0, 2));
        BackfillWaitingTable.keep(batch, TOPIC, 2, first);
        List<Waiting> second = BackfillWaitingTable.load(batch, TOPIC, 2);
        assertThat(second).extracting(Waiting::position).containsExactly(new Position(1, 1), new Position(0, 1));
    }

    @Test
    void settledRecordsAreDeletedOnlyFromTheirTopic() throws SQLException {
        BackfillWaitingTable.keep(batch, TOPIC, 1, List.of(waiting(0, 1, "r"), waiting(0, 2, "r")));
        BackfillWaitingTable.keep(batch, "other", 1, List.of(waiting(0, 1, "r")));

        assertThat(BackfillWaitingTable.settle(batch, TOPIC, List.of(new Position(0, 1), new Position(3, 3))))
                .isEqualTo(1);

        assertThat(BackfillWaitingTable.load(batch, TOPIC, 10))
                .extracting(Waiting::position)
                .containsExactly(new Position(0, 2));
        assertThat(BackfillWaitingTable.summary(batch, "other").records()).isEqualTo(1);
    }

    @Test
    void aRunThatSucceededIsNeverRecordedAsFailedAfterwards() throws SQLException {
        // Its results are committed and `correct` reconciles only succeeded runs: a failure after the commit (the
        // report, the offsets) must leave it succeeded.
        long run = BatchRunsTable.start(batch, BatchRunsTable.Mode.AFFECTED, null, null, false);
        BatchRunsTable.succeed(batch, run, 1, 1, 0, null, null, "{}");

        assertThatThrownBy(() -> BatchRunsTable.fail(batch, run, "too late"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("is not running");
        assertThat(BatchRunsTable.find(batch, run).orElseThrow().status()).isEqualTo(BatchRunsTable.Status.SUCCEEDED);
    }

    private static Waiting waiting(int partition, long offset, String reason) {
        return new Waiting(new Position(partition, offset), "{\"event\": " + offset + "}", reason);
    }
}
