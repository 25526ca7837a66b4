package dev.recount.batch.testutils;

import dev.recount.core.attribution.AttributionMetrics;
import dev.recount.core.sets.Measure;
import dev.recount.core.sets.MetricSet;
import dev.recount.db.sets.SetTables;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * The objects of a metric set other than the default set that the batch layer writes and reads, created in a test's
 * schema, and {@code batch_runs.metric_sets}: what migration V26 and db's {@code SetSchema} create, minimally, in the
 * shapes {@link SetTables} names and the table classes use (columns, keys, grants to the batch role; no triggers,
 * views or reconciler objects). To be replaced by {@code Migrations.apply(..., sets)} once the definitions' DDL is on
 * this branch.
 */
public final class SetTablesFixture {
    private SetTablesFixture() {}

    /** Adds {@code batch_runs.metric_sets} (V26) where the schema lacks it. */
    public static void addRunSetsColumn(Connection admin) throws SQLException {
        try (Statement s = admin.createStatement()) {
            s.execute("ALTER TABLE batch_runs ADD COLUMN IF NOT EXISTS metric_sets text[]");
        }
    }

    /** Creates the tables of {@code set} (nothing for the default set, whose tables the migrations made). */
    public static void create(Connection admin, String schema, MetricSet set) throws SQLException {
        if (set.isDefault()) return;
        SetTables t = new SetTables(set);
        List<String> dims = new ArrayList<>();
        for (String d : set.dimensionNames()) dims.add(d + " text NOT NULL");
        List<String> measures = new ArrayList<>();
        for (Measure m : set.measures()) measures.add(m.name() + " " + m.sqlType() + " NOT NULL");
        String window =
                "window_start timestamptz NOT NULL, window_end timestamptz NOT NULL, " + String.join(", ", dims);
        String key = "PRIMARY KEY (" + t.keyColumns() + ")";
        String attribution = "attributed_clicks bigint NOT NULL, attributed_conversions bigint NOT NULL,"
                + " unattributed_clicks bigint NOT NULL, attributed_spend_micros numeric(38,0) NOT NULL";
        if (AttributionMetrics.COLUMNS.length != 4) throw new IllegalStateException("attribution columns changed");
        String role = schema + "_batch_role";
        try (Statement s = admin.createStatement()) {
            s.execute("CREATE TABLE " + t.streamWindowMetrics() + " (" + window + ", " + String.join(", ", measures)
                    + ", revision int NOT NULL, updated_at timestamptz NOT NULL DEFAULT now(), " + key + ")");
            s.execute("CREATE TABLE " + t.batchWindowMetrics() + " (" + window + ", " + String.join(", ", measures)
                    + ", run_id bigint NOT NULL, computed_at timestamptz NOT NULL DEFAULT now(), " + key + ")");
            s.execute("CREATE TABLE " + t.batchWindowMetricsStaging() + " (run_id bigint NOT NULL, " + window + ", "
                    + String.join(", ", measures) + ")");
            s.execute("CREATE TABLE " + t.windowWrites() + " (side text NOT NULL CHECK (side IN ('stream', 'batch')),"
                    + " window_start timestamptz NOT NULL, written_at timestamptz NOT NULL DEFAULT now())");
            s.execute("CREATE TABLE " + t.batchAttributionMetrics() + " (" + window + ", " + attribution
                    + ", run_id bigint NOT NULL, computed_at timestamptz NOT NULL DEFAULT now(), " + key + ")");
            s.execute("CREATE TABLE " + t.batchAttributionMetricsStaging() + " (run_id bigint NOT NULL, " + window
                    + ", " + attribution + ")");
            s.execute("GRANT SELECT ON " + t.streamWindowMetrics() + " TO " + role);
            s.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON " + t.batchWindowMetrics() + ", "
                    + t.batchWindowMetricsStaging() + ", " + t.batchAttributionMetrics() + ", "
                    + t.batchAttributionMetricsStaging() + " TO " + role);
            s.execute("GRANT INSERT ON " + t.windowWrites() + " TO " + role);
        }
    }
}
