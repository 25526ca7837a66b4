package dev.recount.tools.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.stack.embedded.StackLayout;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The demo's closing hint is a line a user can paste: real paths, and the stack brought up when the demo stopped it. */
class DemoHintTest {
    private static final StackLayout HOME = new StackLayout(Path.of("/tmp/recount-demo-home"));

    @Test
    void namesTheStacksOwnEnvFileWhileTheStackStaysUp() {
        assertThat(DemoRun.lookYourself(HOME, false))
                .isEqualTo(". /tmp/recount-demo-home/local.env && psql -c 'SELECT * FROM demo.window_metrics LIMIT 10'")
                .doesNotContain("<");
    }

    @Test
    void bringsTheStackUpFirstWhenTheDemoStoppedIt() {
        assertThat(DemoRun.lookYourself(HOME, true))
                .isEqualTo("./recount up --home /tmp/recount-demo-home && "
                        + ". /tmp/recount-demo-home/local.env && psql -c 'SELECT * FROM demo.window_metrics LIMIT 10'");
    }
}
