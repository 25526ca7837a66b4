package dev.recount.stream.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

class JobManagerLostTest {

    @Test
    void aRefusedConnectionDeepInTheClientsFailureIsALostJobManager() {
        ConnectException refused = new ConnectException("Connection refused: localhost/127.0.0.1:8081");
        Exception failure =
                new ExecutionException(new CompletionException(new IOException("retries exhausted", refused)));

        assertThat(JobManagerLost.cause(failure)).containsSame(refused);
    }

    @Test
    void anyOtherFailureOfTheJobIsNot() {
        Exception failure = new ExecutionException(new RuntimeException("Job failed", new IOException("disk full")));

        assertThat(JobManagerLost.cause(failure)).isEmpty();
    }

    @Test
    void theErrorSaysTheJobIsGoneAndHowItResumes() {
        String message = JobManagerLost.error(
                        "697b04bb3edfe0b5b662b4d61203f59f",
                        URI.create("file:///var/lib/recount/checkpoints"),
                        new ConnectException("Connection refused"))
                .getMessage();

        assertThat(message)
                .startsWith("lost the Flink JobManager while job 697b04bb3edfe0b5b662b4d61203f59f ran "
                        + "(ConnectException: Connection refused)")
                .contains("`./recount stream --cluster`")
                .endsWith("the newest checkpoint in file:///var/lib/recount/checkpoints")
                .doesNotContain("\n");
    }
}
