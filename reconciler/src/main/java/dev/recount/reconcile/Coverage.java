package dev.recount.reconcile;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Whether the batch layer covered a range for one metric set. Batch is the reference, so a set is reconciled over a
 * range only when succeeded batch runs of that set cover it completely: `range` and `nightly` runs whose {@code
 * metric_sets} names the set (a run from before metric sets, without any, computed the default set), their ranges
 * adding up; `affected` runs do not count, their recorded range may span windows they did not recompute.
 */
final class Coverage {
    private Coverage() {}

    /**
     * Why {@code scope} may not be reconciled for {@code sql}'s set, naming the set, the parts no batch run of it
     * covers and the command that fills them; empty when it is covered. A scope of named windows (a batch run's) is
     * covered by that run.
     */
    static Optional<String> gap(Connection conn, ReconcileStatements sql, Scope scope) throws SQLException {
        if (scope.windowStarts() != null) return Optional.empty();
        List<long[]> gaps = new ArrayList<>();
        try (PreparedStatement ps = sql.uncovered(scope).prepare(conn);
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) gaps.add(new long[] {rs.getLong(1), rs.getLong(2)});
        }
        if (gaps.isEmpty()) return Optional.empty();
        List<String> ranges = new ArrayList<>();
        for (long[] g : gaps) ranges.add("[" + Instant.ofEpochMilli(g[0]) + ", " + Instant.ofEpochMilli(g[1]) + ")");
        String set = sql.set().name();
        Instant from = Instant.ofEpochMilli(gaps.get(0)[0]);
        Instant to = Instant.ofEpochMilli(gaps.get(gaps.size() - 1)[1]);
        return Optional.of("no succeeded batch run covers " + String.join(", ", ranges) + " of [" + scope.from() + ", "
                + scope.to() + ") for metric set " + set + ": run `./recount backfill range --set " + set + " --from "
                + from + " --to " + to + "` (or `backfill nightly`) for it first, then reconcile");
    }
}
