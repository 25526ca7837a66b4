package dev.recount.reconcile;

import dev.recount.db.sets.SetTables;
import dev.recount.db.tables.ReconciliationDiffsTable;
import dev.recount.db.tables.ReconciliationRunsTable;
import dev.recount.db.tables.ReconciliationRunsTable.Verdict;
import dev.recount.reconcile.report.ReportData;
import dev.recount.reconcile.report.ReportSection;
import dev.recount.reconcile.report.ReportWriter;
import dev.recount.reconcile.report.SetReport;
import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A run's report, assembled from what each of its metric sets found ({@link SetResult}) and written inside the run's
 * transaction (the diffs are read in its snapshot), and what the run's {@code reconciliation_runs} row records of it.
 */
final class RunReport {
    /** Rows per list of largest differences in the report. */
    static final int TOP = 25;

    private final ReportData data;
    private final List<SetResult> results;
    private ReportData written;

    RunReport(
            long runId,
            Scope scope,
            ZoneId zone,
            Instant generatedAt,
            Verdict verdict,
            Reconciler.Mode mode,
            List<SetResult> results,
            Map<String, String> notCovered) {
        boolean dryRun = mode == Reconciler.Mode.DRY_RUN;
        List<SetReport> sets = new ArrayList<>();
        for (SetResult r : results) {
            List<ReportSection> sections = r.attribution().counts().compared() == 0
                    ? List.of()
                    : List.of(new AttributionSection(r.attribution(), dryRun, new SetTables(r.set())));
            sets.add(new SetReport(
                    r.set(),
                    r.scope(),
                    r.verdict(),
                    r.comparison(),
                    r.finalTotals(),
                    r.keysFinalized(),
                    r.corrections(),
                    sections));
        }
        this.data = new ReportData(runId, scope, zone, generatedAt, verdict, dryRun, sets, notCovered);
        this.results = results;
    }

    /**
     * Writes the report's files into {@code dir}, each set's diffs read from its table in {@code conn}'s snapshot,
     * telling {@code progress} the diff rows written of all the sets'.
     */
    void write(Connection conn, Path dir, RunProgress progress) throws IOException, SQLException {
        long total = results.stream()
                .mapToLong(r -> r.comparison().range().counts().differing())
                .sum();
        long[] done = {0};
        written = ReportWriter.write(
                dir,
                data,
                TOP,
                set -> sink -> new ReconciliationDiffsTable(new SetTables(set))
                        .forEachOfRun(conn, data.runId(), row -> {
                            sink.accept(row);
                            progress.rows(++done[0], total);
                        }));
    }

    /**
     * What the run's row records: its verdict, the keys of all its sets together, the values corrected, the totals
     * (the default set's, and each set's: {@link ReportWriter#totalsJson}) and where the report is.
     */
    ReconciliationRunsTable.Outcome outcome(Path finalDir) {
        long compared = 0, matched = 0, mismatched = 0, missingInStream = 0, missingInBatch = 0, values = 0;
        for (SetResult r : results) {
            KeyCounts k = r.comparison().range().counts();
            compared += k.compared();
            matched += k.matched();
            mismatched += k.mismatched();
            missingInStream += k.missingInStream();
            missingInBatch += k.missingInBatch();
            values += r.valuesCorrected();
        }
        return new ReconciliationRunsTable.Outcome(
                data.verdict(),
                compared,
                matched,
                mismatched,
                missingInStream,
                missingInBatch,
                values,
                ReportWriter.totalsJson(written == null ? data : written),
                finalDir.toString());
    }
}
