package dev.recount.faults;

import java.time.Duration;
import java.util.List;

/**
 * What one round found: the fault, how often it was injected, how long the pipeline took to commit again after each
 * injection, the accounting, and notes (what a refusal said, which kill points were reached).
 */
record RoundResult(
        Fault fault,
        int injections,
        List<Duration> recoveries,
        Accounting.Result accounting,
        List<String> notes,
        Duration elapsed) {
    boolean passed() {
        return accounting.clean();
    }
}
