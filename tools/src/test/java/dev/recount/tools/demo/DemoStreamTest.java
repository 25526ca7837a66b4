package dev.recount.tools.demo;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

/** How the demo reads Flink's {@code GET /jobs/overview}: a job counts only when its state is RUNNING. */
class DemoStreamTest {
    private final ObjectMapper json = new ObjectMapper();

    @Test
    void aRunningJobCounts() throws Exception {
        assertThat(DemoStream.anyJobRunning(json.readTree(
                        "{\"jobs\":[{\"jid\":\"a\",\"name\":\"recount-stream\",\"state\":\"RUNNING\"}]}")))
                .isTrue();
    }

    @Test
    void aJobThatIsNotRunningYetDoesNotCountEvenIfItsNameSaysRunning() throws Exception {
        assertThat(DemoStream.anyJobRunning(
                        json.readTree("{\"jobs\":[{\"jid\":\"a\",\"name\":\"RUNNING\",\"state\":\"INITIALIZING\"}]}")))
                .isFalse();
        assertThat(DemoStream.anyJobRunning(json.readTree("{\"jobs\":[]}"))).isFalse();
        assertThat(DemoStream.anyJobRunning(json.readTree("{}"))).isFalse();
    }
}
