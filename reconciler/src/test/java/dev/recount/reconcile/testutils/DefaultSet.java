package dev.recount.reconcile.testutils;

import dev.recount.core.config.RecountConfig;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import dev.recount.db.sets.SetTables;
import dev.recount.db.tables.CorrectionLogTable;
import dev.recount.db.tables.ReconciliationDiffsTable;
import dev.recount.db.tables.StreamWindowMetricsTable;
import dev.recount.db.tables.WindowCorrectionsTable;
import dev.recount.db.tables.WindowMetricsView;

/**
 * The default metric set and its tables (testkit's {@link dev.recount.testkit.DefaultSet}, with the table classes
 * the reconciler's tests read), as the tests of the default set's behaviour (what recount did before metric sets,
 * unchanged) use them.
 */
public final class DefaultSet {
    /** The built-in definitions: the default set alone, exact. */
    public static final MetricSets SETS = MetricSets.defaults();

    public static final MetricSet SET = dev.recount.testkit.DefaultSet.SET;
    public static final String NAME = MetricSet.DEFAULT;
    public static final SetTables TABLES = dev.recount.testkit.DefaultSet.TABLES;
    public static final ReconciliationDiffsTable DIFFS = new ReconciliationDiffsTable(TABLES);
    public static final CorrectionLogTable LOG = new CorrectionLogTable(TABLES);
    public static final WindowMetricsView VIEW = new WindowMetricsView(TABLES);
    public static final WindowCorrectionsTable CORRECTIONS = new WindowCorrectionsTable(TABLES);
    public static final StreamWindowMetricsTable STREAM = new StreamWindowMetricsTable(TABLES);

    /** The default set's measures' positions in its values. */
    public static final int IMPRESSIONS = dev.recount.testkit.DefaultSet.IMPRESSIONS,
            CLICKS = dev.recount.testkit.DefaultSet.CLICKS,
            CONVERSIONS = dev.recount.testkit.DefaultSet.CONVERSIONS,
            SPEND = dev.recount.testkit.DefaultSet.SPEND,
            EVENTS = dev.recount.testkit.DefaultSet.EVENTS;

    private DefaultSet() {}

    /**
     * The built-in definitions with {@code settings} ({@code key=value}) applied, e.g. the default set's tolerances
     * {@code reconcile.tolerance.clicks.absolute=1}.
     */
    public static MetricSets with(String... settings) {
        RecountConfig config = RecountConfig.defaults();
        for (String s : settings) {
            int eq = s.indexOf('=');
            config = config.with(s.substring(0, eq), s.substring(eq + 1));
        }
        return MetricSets.fromConfig(config);
    }
}
