package dev.recount.bench.kstreams;

import dev.recount.bench.DefaultSet;
import dev.recount.bench.kstreams.WindowResultsTable.WindowRow;
import dev.recount.core.sets.MeasureSums;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;

/**
 * Upserts window results into PostgreSQL in batches: each result replaces the pending one of its window key, and
 * the pending rows are written in one JDBC batch and transaction when {@code batchRows} are pending or at each
 * punctuation ({@code flushEvery}, wall clock).
 *
 * <p>Not covered by Kafka's exactly-once: Kafka Streams commits its offsets and stores whether or not these rows
 * reached PostgreSQL. Re-processing after a failure re-sends full window values (the upsert converges), but rows
 * pending here when the process dies are lost until their window changes again. The idiomatic safe sink is an
 * output topic and Kafka Connect's JDBC sink; this is what a user would write inside the application.
 *
 * <p>End of a run: once {@link RunProgress#drainRequested()}, the next punctuation writes what is pending and asks
 * for a commit of this task, which flushes the window store's cache into {@link #process}; the punctuation after that
 * writes those results and reports this task drained. (A plain close would not do: Kafka Streams closes the
 * processors before its final commit flushes the cache.)
 */
public final class UpsertWindowResults implements Processor<Windowed<String>, MeasureSums, Void, Void> {
    private final String jdbcUrl;
    private final String user;
    private final String password;
    private final String schema;
    private final int batchRows;
    private final Duration flushEvery;
    private final RunProgress progress;
    private final Map<WindowedKey, WindowRow> pending = new LinkedHashMap<>();
    private ProcessorContext<Void, Void> context;
    private Connection connection;
    private PreparedStatement upsert;
    private boolean commitRequested;
    private boolean drained;

    public UpsertWindowResults(
            String jdbcUrl,
            String user,
            String password,
            String schema,
            int batchRows,
            Duration flushEvery,
            RunProgress progress) {
        if (batchRows < 1) throw new IllegalArgumentException("batchRows must be >= 1, got " + batchRows);
        this.jdbcUrl = jdbcUrl;
        this.user = user;
        this.password = password;
        this.schema = schema;
        this.batchRows = batchRows;
        this.flushEvery = flushEvery;
        this.progress = progress;
    }

    @Override
    public void init(ProcessorContext<Void, Void> context) {
        this.context = context;
        try {
            connection = DriverManager.getConnection(jdbcUrl, user, password);
            connection.setAutoCommit(false);
            upsert = connection.prepareStatement(WindowResultsTable.upsert(schema));
        } catch (SQLException e) {
            throw new StreamsException("cannot connect to PostgreSQL at " + jdbcUrl, e);
        }
        context.schedule(flushEvery, PunctuationType.WALL_CLOCK_TIME, now -> onPunctuation());
        progress.upsertTasksOpen.incrementAndGet();
    }

    @Override
    public void process(Record<Windowed<String>, MeasureSums> result) {
        Windowed<String> key = result.key();
        WindowRow row = new WindowRow(
                key.window().start(),
                key.window().end(),
                CampaignChannel.campaign(key.key()),
                CampaignChannel.channel(key.key()),
                DefaultSet.SET.values(result.value()));
        pending.put(new WindowedKey(row.windowStart(), key.key()), row);
        if (pending.size() >= batchRows) flush();
    }

    private void onPunctuation() {
        flush();
        if (!progress.drainRequested() || drained) return;
        if (!commitRequested) {
            context.commit();
            commitRequested = true;
        } else {
            drained = true;
            progress.upsertTasksDrained.incrementAndGet();
        }
    }

    private void flush() {
        if (pending.isEmpty()) return;
        try {
            for (WindowRow row : pending.values()) {
                WindowResultsTable.bind(upsert, row);
                upsert.addBatch();
            }
            upsert.executeBatch();
            connection.commit();
        } catch (SQLException e) {
            throw new StreamsException("upserting " + pending.size() + " window results failed", e);
        }
        progress.rowsUpserted.add(pending.size());
        pending.clear();
    }

    @Override
    public void close() {
        try {
            if (connection != null) connection.close();
        } catch (SQLException e) {
            throw new StreamsException("closing the PostgreSQL connection failed", e);
        }
    }

    private record WindowedKey(long windowStart, String campaignChannel) {}
}
