package dev.recount.stream.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.db.tables.StreamProgressTable.Committed;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.flink.api.common.JobID;
import org.junit.jupiter.api.Test;

/** Which starts are refused, judged by what PostgreSQL holds. */
class RestoreGuardTest {
    private static final String LINEAGE = "lineage-a";
    private final List<String> log = new ArrayList<>();

    private static ResumePlan restore(String newest, String... older) {
        return new ResumePlan(
                ResumePlan.Kind.RESTORE,
                JobID.generate(),
                newest,
                Map.of(),
                Long.MIN_VALUE,
                null,
                List.of(older),
                LINEAGE);
    }

    /** Snapshots named chk-N read as checkpoint N; "bad" ones cannot be read. */
    private static long read(String path) throws IOException {
        if (path.contains("bad")) throw new IOException("truncated _metadata");
        return Long.parseLong(path.substring(path.lastIndexOf('-') + 1));
    }

    private ResumePlan check(ResumePlan plan, Committed committed, boolean fromEarliest) {
        return RestoreGuard.check(plan, Optional.ofNullable(committed), fromEarliest, RestoreGuardTest::read, log::add);
    }

    @Test
    void theNewestSnapshotIsUsedWhenItIsNewerThanEverythingCommitted() {
        ResumePlan plan = restore("/c/chk-10", "/c/chk-9");
        assertThat(check(plan, new Committed(LINEAGE, 9), false)).isSameAs(plan);
        assertThat(log).isEmpty();
    }

    @Test
    void aSnapshotAtOrBeforeTheLastCommittedMarkIsRefused() {
        // chk-10 was committed (its commit carried mark 9), then deleted: resuming chk-9 would count twice.
        assertThatThrownBy(() -> check(restore("/c/chk-9", "/c/chk-8"), new Committed(LINEAGE, 9), false))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("/c/chk-9")
                .hasMessageContaining("count events twice")
                .hasMessageContaining("--from-earliest");
    }

    @Test
    void anUnreadableNewestIsSkippedOnlyWhenNothingAfterTheOlderOneWasCommitted() {
        ResumePlan fallback = check(restore("/c/bad-chk-10", "/c/chk-9", "/c/chk-8"), new Committed(LINEAGE, 8), false);
        assertThat(fallback.snapshot()).isEqualTo("/c/chk-9");
        assertThat(fallback.olderSnapshots()).containsExactly("/c/chk-8");
        assertThat(log).singleElement().asString().contains("bad-chk-10").contains("truncated _metadata");

        assertThatThrownBy(() -> check(restore("/c/bad-chk-10", "/c/chk-9"), new Committed(LINEAGE, 9), false))
                .hasMessageContaining("unreadable")
                .hasMessageContaining("bad-chk-10")
                .hasMessageContaining("count events twice");
        assertThatThrownBy(() -> check(restore("/c/bad-chk-10", "/c/bad-chk-9"), null, false))
                .hasMessageContaining("no readable snapshot");
    }

    @Test
    void commitsOfAnotherLineageOrOfOlderVersionsDoNotJudgeThisOne() {
        ResumePlan plan = restore("/c/chk-3");
        assertThat(check(plan, new Committed("other", 500), false)).isSameAs(plan);
        assertThat(check(plan, new Committed(null, 500), false)).isSameAs(plan);
    }

    @Test
    void startingFromNothingOverCommittedResultsNeedsFromEarliest() {
        assertThatThrownBy(() -> check(ResumePlan.fresh(), new Committed(LINEAGE, 4), false))
                .hasMessageContaining("no checkpoint to resume")
                .hasMessageContaining("--from-earliest");
        assertThat(check(ResumePlan.fresh(), new Committed(LINEAGE, 4), true).kind())
                .isEqualTo(ResumePlan.Kind.FRESH);
        assertThat(check(ResumePlan.fresh(), null, false).kind()).isEqualTo(ResumePlan.Kind.FRESH);
    }
}
