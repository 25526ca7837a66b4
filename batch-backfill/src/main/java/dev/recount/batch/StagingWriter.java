package dev.recount.batch;

import dev.recount.core.attribution.AttributionMetrics;
import dev.recount.core.config.PostgresSettings;
import dev.recount.core.sets.Measure;
import dev.recount.core.sets.MeasureValues;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.window.WindowKey;
import dev.recount.db.Database;
import dev.recount.db.sets.SetTables;
import dev.recount.db.tables.AttributionRow;
import dev.recount.db.tables.BatchAttributionMetricsTable;
import dev.recount.db.tables.BatchWindowMetricsTable;
import dev.recount.db.tables.WindowRow;
import java.io.Serializable;
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
 * Loads a run's window rows of one metric set into the set's {@code batch_window_metrics_staging}, always through
 * {@link BatchWindowMetricsTable#insertStaging} (one row binder for every path), and its attribution rows into the
 * set's {@code batch_attribution_metrics_staging} through {@link BatchAttributionMetricsTable#insertStaging}, in one of
 * two ways decided by size:
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

    /**
     * Which staging table of which set, and how a Spark row becomes its row. Serializable: executors insert with it.
     * Holds the set (data) and builds its table classes where it runs.
     */
    record Target(Kind kind, MetricSet set, long windowSizeMillis) implements Serializable {
        enum Kind {
            WINDOWS,
            ATTRIBUTION
        }

        static Target windows(MetricSet set) {
            return new Target(Kind.WINDOWS, set, set.window().toMillis());
        }

        static Target attribution(MetricSet set) {
            return new Target(Kind.ATTRIBUTION, set, set.window().toMillis());
        }

        void insert(Connection conn, long runId, List<Row> rows) throws SQLException {
            SetTables tables = new SetTables(set);
            if (kind == Kind.WINDOWS) {
                List<WindowRow> out = new ArrayList<>(rows.size());
                for (Row r : rows) out.add(toWindowRow(r, set, windowSizeMillis));
                new BatchWindowMetricsTable(tables).insertStaging(conn, runId, out);
            } else {
                List<AttributionRow> out = new ArrayList<>(rows.size());
                for (Row r : rows) out.add(toAttributionRow(r, set, windowSizeMillis));
                new BatchAttributionMetricsTable(tables).insertStaging(conn, runId, out);
            }
        }

        String what() {
            return set.name() + " " + kind.name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** Writes {@code rows} as run {@code runId}'s rows of {@code target}'s staging table. */
    Path write(Target target, Dataset<Row> rows, long rowCount, long runId, Connection runConnection)
            throws SQLException {
        if (rowCount <= driverMaxRows) {
            List<Row> chunk = new ArrayList<>(INSERT_CHUNK);
            for (Row r : rows.collectAsList()) {
                chunk.add(r);
                if (chunk.size() == INSERT_CHUNK) {
                    target.insert(runConnection, runId, chunk);
                    chunk.clear();
                }
            }
            if (!chunk.isEmpty()) target.insert(runConnection, runId, chunk);
            return Path.DRIVER;
        }
        // A few large partitions rather than the shuffle's many small ones: one connection and a run of full
        // batches each, instead of hundreds of connections with a handful of rows.
        int writers = (int) Math.max(1, Math.min(MAX_WRITERS, rowCount / ROWS_PER_WRITER));
        LOG.info(
                "run {}: staging {} {} rows from the executors over {} connections",
                runId,
                rowCount,
                target.what(),
                writers);
        rows.coalesce(writers).foreachPartition(new InsertPartition(postgres, password, runId, target));
        return Path.EXECUTORS;
    }

    /** A row of {@link AttributionAggregation#perKey} as the set's table row. */
    static AttributionRow toAttributionRow(Row r, MetricSet set, long windowSizeMillis) {
        long start = r.getLong(r.fieldIndex(WindowAggregation.WINDOW_START));
        BigDecimal spend = r.getDecimal(r.fieldIndex(AttributionMetrics.COLUMNS[3]));
        if (spend == null) throw new IllegalStateException("attributed_spend_micros is NULL for window " + r);
        AttributionMetrics metrics = new AttributionMetrics(
                r.getLong(r.fieldIndex(AttributionMetrics.COLUMNS[0])),
                r.getLong(r.fieldIndex(AttributionMetrics.COLUMNS[1])),
                r.getLong(r.fieldIndex(AttributionMetrics.COLUMNS[2])),
                spend.toBigIntegerExact());
        return new AttributionRow(key(r, set, start), start + windowSizeMillis, metrics);
    }

    /** A row of {@link WindowAggregation.Recomputed#stored} as the set's table row. */
    static WindowRow toWindowRow(Row r, MetricSet set, long windowSizeMillis) {
        long start = r.getLong(r.fieldIndex(WindowAggregation.WINDOW_START));
        List<Measure> measures = set.measures();
        BigInteger[] values = new BigInteger[measures.size()];
        for (int i = 0; i < values.length; i++) {
            Measure m = measures.get(i);
            int at = r.fieldIndex(m.name());
            if (r.isNullAt(at)) throw new IllegalStateException(m.name() + " is NULL for window " + r);
            // A sum is DECIMAL(38,0): a fraction would be a bug in the definition, an error rather than rounded.
            values[i] = m.isCount()
                    ? BigInteger.valueOf(r.getLong(at))
                    : r.getDecimal(at).toBigIntegerExact();
        }
        return new WindowRow(key(r, set, start), start + windowSizeMillis, new MeasureValues(values));
    }

    private static WindowKey key(Row r, MetricSet set, long start) {
        List<String> names = set.dimensionNames();
        String[] dims = new String[names.size()];
        for (int i = 0; i < dims.length; i++) dims[i] = r.getString(r.fieldIndex(names.get(i)));
        return WindowKey.of(start, dims);
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
        private final Target target;

        InsertPartition(PostgresSettings postgres, String password, long runId, Target target) {
            this.postgres = postgres;
            this.password = password;
            this.runId = runId;
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
                        target.insert(conn, runId, chunk);
                        chunk.clear();
                    }
                }
                if (!chunk.isEmpty()) target.insert(conn, runId, chunk);
            }
        }
    }
}
