package dev.recount.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.testkit.Poll;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Freezing PostgreSQL's processes: one that ended after it was listed is skipped, not a failure that leaves the rest frozen. */
class StackControlTest {
    /** The state letter of /proc/PID/stat ('T': stopped). */
    static char state(long pid) throws Exception {
        String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
        return stat.charAt(stat.lastIndexOf(')') + 2);
    }

    @Test
    void aProcessThatEndedBeforeItsSignalIsSkippedAndTheOthersAreStoppedAndThawed() throws Exception {
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        Process live = new ProcessBuilder("sleep", "120").start();
        try {
            List<Long> stopped = StackControl.freeze(List.of(live.pid(), gone.pid()));

            assertThat(stopped).containsExactly(live.pid());
            // A signal is acted on when the process next runs: wait for the state, with a deadline.
            Poll.until(Duration.ofSeconds(10), "sleep stopped", () -> state(live.pid()) == 'T');
            StackControl.thaw(stopped);
            Poll.until(Duration.ofSeconds(10), "sleep running again", () -> state(live.pid()) != 'T');
        } finally {
            live.destroyForcibly();
        }
    }
}
