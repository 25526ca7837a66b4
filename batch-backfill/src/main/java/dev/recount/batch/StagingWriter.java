package dev.recount.batch;

import dev.recount.core.attribution.AttributionMetrics;
import dev.recount.core.config.PostgresSettings;
import dev.recount.core.lake.LakeLayout;
import dev.recount.core.metrics.Metric;
import dev.recount.core.metrics.WindowMetrics;
import dev.recount.core.window.WindowKey;
import dev.recount.db.Database;
import dev.recount.db.tables.AttributionRow;
import dev.recount.db.tables.BatchAttributionMetricsTable;
import dev.recount.db.tables.BatchWindowMetricsTable;
import dev.recount.db.tables.WindowRow;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Properties;
import org.apache.spark.api.java.function.ForeachPartitionFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loads a run's window rows into {@code batch_window_metrics_staging}, always through
 * {@link BatchWindowMetricsTable#insertStaging} (one row binder for every path), and its attribution rows into
 * {@code batch_attribution_metrics_staging} through {@link BatchAttributionMetricsTable#insertStaging}, in one of two
 * ways decided by size:
 * <ul>
 *   <li>up to {@code driverMaxRows} rows: collected to the driver and inserted on the run's own connection —
 *       no extra connections, no second Spark job for a handful of windows;</li>
 *   <li>more: each Spark partition inserts its own rows from the executor that holds it, in parallel, so a
 *       large result never has to fit in the driver's memory.</li>
 * </ul>
 * Staging is not the result: nothing is visible until {@code replaceFromStaging} commits, so rows loaded over
 * many connections (and partly loaded ones, if a task fails and is retried) are harmless.
 */
final class StagingWriter {
    private static final Logger LOG = LoggerFactory.getLogger(StagingWriter.class);
    static final int INSERT_CHUNK = 5_000;
    private static final int MAX_WRITERS = 8;
    private static final long ROWS_PER_WRITER = 100_000;

    enum Path {
        DRIVER,
        EXECUTORS
    }

    private final PostgresSettings postgres;
    private final String password;
    private final long driverMaxRows;

    StagingWriter(PostgresSettings postgres, String password, long driverMaxRows) {
        this.postgres = postgres;
        this.password = password;
        this.driverMaxRows = driverMaxRows;
    }

    /** Which staging table, and how a Spark row becomes its row. */
    enum Target {
        WINDOWS {
            @Override
            void insert(Connection conn, long runId, List<Row> rows, long windowSizeMillis) throws SQLException {
                List<WindowRow> out = new ArrayList<>(rows.size());
                for (Row r : rows) out.add(toWindowRow(r, windowSizeMillis));
                BatchWindowMetricsTable.insertStaging(conn, runId, out);
            }
        },
        ATTRIBUTION {
            @Override
            void insert(Connection conn, long runId, List<Row> rows, long windowSizeMillis) throws SQLException {
                List<AttributionRow> out = new ArrayList<>(rows.size());
                for (Row r : rows) out.add(toAttributionRow(r, windowSizeMillis));
                BatchAttributionMetricsTable.insertStaging(conn, runId, out);
            }
        };

        abstract void insert(Connection conn, long runId, List<Row> rows, long windowSizeMillis) throws SQLException;
    }

    /** Writes {@code aggregated} (from {@link WindowAggregation#aggregate}) as run {@code runId}'s staging rows. */
    Path write(Dataset<Row> aggregated, long rowCount, long runId, long windowSizeMillis, Connection runConnection)
            throws SQLException {
        return write(Target.WINDOWS, aggregated, rowCount, runId, windowSizeMillis, runConnection);
    }

    /** Writes {@code aggregated} as run {@code runId}'s rows of {@code target}'s staging table. */
    Path write(
            Target target,
            Dataset<Row> aggregated,
            long rowCount,
            long runId,
            long windowSizeMillis,
            Connection runConnection)
            throws SQLException {
        if (rowCount <= driverMaxRows) {
            List<Row> chunk = new ArrayList<>(INSERT_CHUNK);
            for (Row r : aggregated.collectAsList()) {
                chunk.add(r);
                if (chunk.size() == INSERT_CHUNK) {
                    target.insert(runConnection, runId, chunk, windowSizeMillis);
                    chunk.clear();
                }
            }
            if (!chunk.isEmpty()) target.insert(runConnection, runId, chunk, windowSizeMillis);
            return Path.DRIVER;
        }
        // A few large partitions rather than the shuffle's many small ones: one connection and a run of full
        // batches each, instead of hundreds of connections with a handful of rows.
        int writers = (int) Math.max(1, Math.min(MAX_WRITERS, rowCount / ROWS_PER_WRITER));
        LOG.info(
                "run {}: staging {} {} rows from the executors over {} connections",
                runId,
                rowCount,
                target.name().toLowerCase(java.util.Locale.ROOT),
                writers);
        aggregated
                .coalesce(writers)
                .foreachPartition(new InsertPartition(postgres, password, runId, windowSizeMillis, target));
        return Path.EXECUTORS;
    }

    /** A row of {@link AttributionAggregation#recompute} as the table row. */
    static AttributionRow toAttributionRow(Row r, long windowSizeMillis) {
        long start = r.getLong(r.fieldIndex(WindowAggregation.WINDOW_START));
        WindowKey key = new WindowKey(
                start,
                r.getString(r.fieldIndex(LakeLayout.CAMPAIGN_ID)),
                r.getString(r.fieldIndex(LakeLayout.CHANNEL_ID)));
        BigDecimal spend = r.getDecimal(r.fieldIndex(AttributionMetrics.COLUMNS[3]));
        if (spend == null) throw new IllegalStateException("attributed_spend_micros is NULL for window " + r);
        AttributionMetrics metrics = new AttributionMetrics(
                r.getLong(r.fieldIndex(AttributionMetrics.COLUMNS[0])),
                r.getLong(r.fieldIndex(AttributionMetrics.COLUMNS[1])),
                r.getLong(r.fieldIndex(AttributionMetrics.COLUMNS[2])),
                spend.toBigIntegerExact());
        return new AttributionRow(key, start + windowSizeMillis, metrics);
    }

    static WindowRow toWindowRow(Row r, long windowSizeMillis) {
        long start = r.getLong(r.fieldIndex(WindowAggregation.WINDOW_START));
        WindowKey key = new WindowKey(
                start,
                r.getString(r.fieldIndex(LakeLayout.CAMPAIGN_ID)),
                r.getString(r.fieldIndex(LakeLayout.CHANNEL_ID)));
        WindowMetrics metrics = new WindowMetrics(
                count(r, Metric.IMPRESSIONS),
                count(r, Metric.CLICKS),
                count(r, Metric.CONVERSIONS),
                spend(r),
                count(r, Metric.EVENTS));
        return new WindowRow(key, start + windowSizeMillis, metrics);
    }

    private static long count(Row r, Metric m) {
        return r.getLong(r.fieldIndex(m.column()));
    }

    /** The DECIMAL(38,0) spend sum, exactly (a fraction would be a bug in the definition: an error, not rounded). */
    private static BigInteger spend(Row r) {
        BigDecimal v = r.getDecimal(r.fieldIndex(Metric.SPEND_MICROS.column()));
        if (v == null) throw new IllegalStateException("spend_micros is NULL for window " + r);
        return v.toBigIntegerExact();
    }

    /**
     * Runs on an executor: one plain JDBC connection per partition, as the same login and schema as the driver's
     * {@code Database.pool(..., Role.BATCH)} (a pool per task would outlive nothing). That login holds the batch
     * role's privileges by membership, so no SET ROLE is involved.
     */
    private static final class InsertPartition implements ForeachPartitionFunction<Row> {
        private static final long serialVersionUID = 1L;
        private final PostgresSettings postgres;
        private final String password;
        private final long runId;
        private final long windowSizeMillis;
        private final Target target;

        InsertPartition(PostgresSettings postgres, String password, long runId, long windowSizeMillis, Target target) {
            this.postgres = postgres;
            this.password = password;
            this.runId = runId;
            this.windowSizeMillis = windowSizeMillis;
            this.target = target;
        }

        @Override
        public void call(Iterator<Row> rows) throws SQLException {
            if (!rows.hasNext()) return;
            Properties props = new Properties();
            props.setProperty("user", postgres.user());
            if (password != null) props.setProperty("password", password);
            // Lets the driver send each chunk as multi-row INSERTs: several times fewer round trips.
            props.setProperty("reWriteBatchedInserts", "true");
            // The driver class directly, not DriverManager: on an executor the driver sits in the application
            // jar's class loader, which DriverManager does not always consult.
            Connection opened = new org.postgresql.Driver().connect(postgres.jdbcUrl(), props);
            if (opened == null) throw new SQLException("not a PostgreSQL JDBC URL: " + postgres.jdbcUrl());
            try (Connection conn = opened) {
                conn.setSchema(postgres.schema());
                // A killed or vanished executor's session then ends soon, with its rows and its lock on staging.
                Database.checkClientConnection(conn);
                List<Row> chunk = new ArrayList<>(INSERT_CHUNK);
                while (rows.hasNext()) {
                    chunk.add(rows.next());
                    if (chunk.size() == INSERT_CHUNK) {
                        target.insert(conn, runId, chunk, windowSizeMillis);
                        chunk.clear();
                    }
                }
                if (!chunk.isEmpty()) target.insert(conn, runId, chunk, windowSizeMillis);
            }
        }
    }
}
