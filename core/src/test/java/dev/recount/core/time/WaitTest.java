package dev.recount.core.time;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The one wait with a deadline, on a clock that moves only when the wait pauses: minutes of waiting in no time. */
class WaitTest {
    private final ProcessClock.Manual clock = ProcessClock.manual();

    @Test
    void whatIsThereAtOnceIsReturnedWithoutAPause() throws Exception {
        Optional<String> v = Wait.upTo(Duration.ofMinutes(1)).on(clock).untilPresent(() -> Optional.of("up"));
        assertThat(v).contains("up");
        assertThat(clock.pauses()).isZero();
    }

    @Test
    void itChecksUntilTheValueComesPausingBetweenChecks() throws Exception {
        int[] checks = {0};
        Optional<Integer> v = Wait.upTo(Duration.ofMinutes(1))
                .every(Duration.ofSeconds(2))
                .on(clock)
                .untilPresent(() -> ++checks[0] == 4 ? Optional.of(checks[0]) : Optional.empty());
        assertThat(v).contains(4);
        assertThat(clock.elapsed()).isEqualTo(Duration.ofSeconds(6));
    }

    @Test
    void itGivesUpAtTheDeadlineAfterALastCheckThere() throws Exception {
        List<Duration> checkedAt = new ArrayList<>();
        boolean held = Wait.upTo(Duration.ofSeconds(5))
                .every(Duration.ofSeconds(2))
                .on(clock)
                .until(() -> {
                    checkedAt.add(clock.elapsed());
                    return false;
                });
        assertThat(held).isFalse();
        // Never past the deadline: the last pause is shortened so the last check is at it.
        assertThat(checkedAt)
                .containsExactly(Duration.ZERO, Duration.ofSeconds(2), Duration.ofSeconds(4), Duration.ofSeconds(5));
        assertThat(clock.elapsed()).isEqualTo(Duration.ofSeconds(5));
    }

    @Test
    void aWaitOfZeroChecksExactlyOnce() throws Exception {
        int[] checks = {0};
        assertThat(Wait.upTo(Duration.ZERO).on(clock).until(() -> ++checks[0] < 0))
                .isFalse();
        assertThat(checks[0]).isEqualTo(1);
        assertThat(clock.pauses()).isZero();
    }

    @Test
    void theBackOffDoublesUpToTheLongestPause() throws Exception {
        List<Duration> checkedAt = new ArrayList<>();
        Wait.upTo(Duration.ofSeconds(2))
                .backingOff(Duration.ofMillis(100), Duration.ofMillis(500))
                .on(clock)
                .until(() -> {
                    checkedAt.add(clock.elapsed());
                    return false;
                });
        assertThat(checkedAt)
                .containsExactly(
                        Duration.ZERO,
                        Duration.ofMillis(100),
                        Duration.ofMillis(300),
                        Duration.ofMillis(700),
                        Duration.ofMillis(1200),
                        Duration.ofMillis(1700),
                        Duration.ofMillis(2000));
    }

    @Test
    void aCheckThatThrowsEndsTheWaitAtOnce() {
        assertThatThrownBy(() -> Wait.upTo(Duration.ofMinutes(1)).on(clock).untilPresent(() -> {
                    throw new IllegalStateException("the broker exited");
                }))
                .hasMessage("the broker exited");
        assertThat(clock.pauses()).isZero();
    }

    @Test
    void retryReturnsTheLastResultDoneOrNotAndSaysBeforeEachPause() throws Exception {
        List<String> said = new ArrayList<>();
        int[] tries = {0};
        int last = Wait.upTo(Duration.ofMinutes(12))
                .every(Duration.ofMinutes(5))
                .on(clock)
                .retry(() -> ++tries[0], n -> false, (n, pause) -> said.add("try " + n + ", again in " + pause));
        assertThat(last).isEqualTo(4);
        assertThat(said).containsExactly("try 1, again in PT5M", "try 2, again in PT5M", "try 3, again in PT2M");
        assertThat(clock.elapsed()).isEqualTo(Duration.ofMinutes(12));

        int done = Wait.upTo(Duration.ofMinutes(12))
                .every(Duration.ofMinutes(5))
                .on(clock)
                .retry(() -> 7, n -> n == 7, (n, pause) -> said.add("never"));
        assertThat(done).isEqualTo(7);
        assertThat(said).doesNotContain("never");
    }

    @Test
    void anInterruptEndsTheWait() {
        Thread.currentThread().interrupt();
        assertThatThrownBy(() -> Wait.upTo(Duration.ofMinutes(1)).on(clock).until(() -> false))
                .isInstanceOf(InterruptedException.class);
        assertThat(Thread.interrupted()).isFalse();
    }

    @Test
    void aDeadlineSharedBySeveralStepsGivesEachWhatIsLeft() {
        Deadline deadline = Deadline.after(Duration.ofSeconds(10), clock);
        clock.advance(Duration.ofSeconds(7));
        assertThat(deadline.remaining()).isEqualTo(Duration.ofSeconds(3));
        assertThat(deadline.passed()).isFalse();
        clock.advance(Duration.ofSeconds(4));
        assertThat(deadline.passed()).isTrue();
        assertThat(deadline.remaining()).isEqualTo(Duration.ZERO);
        assertThat(deadline.remaining(Duration.ofSeconds(1))).isEqualTo(Duration.ofSeconds(1));
        assertThat(deadline.timeout()).isEqualTo(Duration.ofSeconds(10));
    }

    @Test
    void aNegativeTimeoutIsAMistake() {
        assertThatThrownBy(() -> Wait.upTo(Duration.ofSeconds(-1))).hasMessageContaining("must not be negative");
    }
}
