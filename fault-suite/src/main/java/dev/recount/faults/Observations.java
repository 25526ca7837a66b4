package dev.recount.faults;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * What a round records while it injects its fault: how long the pipeline took to commit again after each injection,
 * notes for the report (which moment a kill hit, what a refusal said), and problems (a fault that was not injected as
 * planned, a round-specific promise broken: each makes the round not exact).
 */
final class Observations {
    final List<Duration> recoveries = new ArrayList<>();
    final List<String> notes = new ArrayList<>();
    final List<String> problems = new ArrayList<>();
}
