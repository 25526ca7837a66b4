package dev.recount.core.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The one table of exit codes: each number once, with one meaning, the shared three where every tool has them. */
class ExitCodeTest {
    @Test
    void everyNumberAndLabelIsUsedOnceAndTheNumbersRunFromZeroWithoutAGap() {
        List<Integer> numbers =
                Arrays.stream(ExitCode.values()).map(ExitCode::code).toList();
        assertThat(numbers).doesNotHaveDuplicates();
        assertThat(numbers)
                .containsExactlyElementsOf(java.util.stream.IntStream.range(0, ExitCode.values().length)
                        .boxed()
                        .toList());
        assertThat(Arrays.stream(ExitCode.values()).map(ExitCode::label)).doesNotHaveDuplicates();
        assertThat(Arrays.stream(ExitCode.values()).map(ExitCode::meaning)).allMatch(m -> !m.isBlank());
    }

    @Test
    void theSharedCodesAreThoseOfEveryUnixTool() {
        assertThat(ExitCode.OK.code()).isZero();
        assertThat(ExitCode.FAILED.code()).isEqualTo(1);
        assertThat(ExitCode.USAGE.code()).isEqualTo(2);
        assertThat(Arrays.stream(ExitCode.values()).filter(ExitCode::isShared))
                .containsExactly(ExitCode.OK, ExitCode.FAILED, ExitCode.USAGE);
    }

    /** The numbers schedulers and alert rules read (deploy/): moving one breaks them silently. */
    @Test
    void theNumbersDeploymentsActOnStayPut() {
        assertThat(ExitCode.BEYOND_TOLERANCE.code()).isEqualTo(3);
        assertThat(ExitCode.REFUSED.code()).isEqualTo(4);
        assertThat(ExitCode.BUSY.code()).isEqualTo(5);
        assertThat(ExitCode.PARTLY.code()).isEqualTo(6);
        assertThat(ExitCode.NOT_RUNNING.code()).isEqualTo(7);
    }

    @Test
    void aStatusOutsideTheTableIsAFailure() {
        assertThat(ExitCode.of(4)).isEqualTo(ExitCode.REFUSED);
        assertThat(ExitCode.of(137)).isEqualTo(ExitCode.FAILED);
    }
}
