package dev.recount.stream.sink;

import static dev.recount.stream.Fixtures.W0;
import static dev.recount.stream.Fixtures.ms;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.StreamWindowMetricsTable.Row;
import dev.recount.db.tables.WindowRow;
import dev.recount.stream.Fixtures;
import dev.recount.stream.run.StreamRun;
import dev.recount.stream.testutils.FlinkCluster;
import dev.recount.stream.testutils.StreamTestStack;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A window row PostgreSQL refuses for its content, driven through the real sink on a MiniCluster with restarts
 * switched off: the job must finish without failing, the other rows must be committed, and the refused row must
 * be in stream_rejected_rows and on the dead-letter topic, once.
 */
class RejectedRowITCase {
    @RegisterExtension
    static final FlinkCluster FLINK = new FlinkCluster(1);

    private static final ObjectMapper JSON = new ObjectMapper();

    private final StreamTestStack stack = new StreamTestStack();

    private static SetWindowRow row(String campaign, long events) {
        return new SetWindowRow(
                MetricSet.DEFAULT,
                new Row(
                        new WindowRow(
                                WindowKey.of(ms(W0), campaign, "web"),
                                ms(W0) + 60_000,
                                Fixtures.defaultValues(events, 0, 0, 10 * events, events)),
                        1));
    }

    @Test
    void aRowPostgresRefusesBecomesADeadLetterAndTheRestIsCommitted(@TempDir Path home) throws Exception {
        StreamTestStack.Job job = stack.newJob(stack.createTopic("input", 1), home, Map.of());
        // NUL is valid in a Java string and refused by PostgreSQL text: validation keeps such ids out, the sink
        // must survive one anyway.
        List<SetWindowRow> rows = List.of(row("good-1", 3), row("bad-\u0000-id", 2), row("good-2", 5));

        Configuration conf = new Configuration();
        conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, java.time.Duration.ofMillis(200));
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
        StreamExecutionEnvironment env = FLINK.environments().create(conf);
        env.setParallelism(1);
        env.fromData(rows, SetWindowRow.TYPE)
                .sinkTo(StreamRun.sinks(job.settings(), "rejected-row-test").windowMetrics());
        env.execute("rejected-row");

        assertThat(stack.windowRows(job))
                .extracting(r -> r.window().key().dimension(0))
                .containsExactlyInAnyOrder("good-1", "good-2");
        try (Connection c = stack.stack().adminConnection();
                Statement s = c.createStatement()) {
            c.setSchema(job.schema());
            try (ResultSet rs = s.executeQuery("SELECT row_json, sql_state FROM stream_rejected_rows")) {
                assertThat(rs.next()).isTrue();
                assertThat(JSON.readTree(rs.getString(1)).get("campaign_id").asText())
                        .isEqualTo("bad-\u0000-id");
                assertThat(rs.getString(2)).startsWith("22");
                assertThat(rs.next()).isFalse();
            }
        }
        List<JsonNode> deadLetters = stack.readCommitted(job.settings().topics().deadLetter()).stream()
                .map(r -> read(new String(r.value(), StandardCharsets.UTF_8)))
                .toList();
        assertThat(deadLetters).singleElement().satisfies(d -> {
            assertThat(d.get("reason").asText()).isEqualTo("rejected");
            assertThat(d.get("detail").asText()).contains("PostgreSQL refused");
            assertThat(d.get("row").get("campaign_id").asText()).isEqualTo("bad-\u0000-id");
            assertThat(d.get("row").get("events").asLong()).isEqualTo(2);
        });
    }

    private static JsonNode read(String json) {
        try {
            return JSON.readTree(json);
        } catch (Exception e) {
            throw new AssertionError(json, e);
        }
    }
}
