package dev.recount.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.StageInfo;

/**
 * Per completed Spark stage: its tasks, the tasks' run time summed (CPU-ish seconds over all cores), wall seconds and
 * the first line of its call site — where a plan spends its time. Collected between {@link #clear} and {@link #print}.
 */
final class StageTimes extends SparkListener {
    private final List<String> lines = new ArrayList<>();

    @Override
    public synchronized void onStageCompleted(SparkListenerStageCompleted completed) {
        StageInfo s = completed.stageInfo();
        double runSeconds = s.taskMetrics().executorRunTime() / 1e3;
        long start = s.submissionTime().isDefined() ? (Long) s.submissionTime().get() : 0;
        long end = s.completionTime().isDefined() ? (Long) s.completionTime().get() : start;
        lines.add(String.format(
                Locale.ROOT,
                "stage %d: %d tasks, run %.2f s, wall %.2f s, shuffle write %d MB, read %d MB: %s",
                s.stageId(),
                s.numTasks(),
                runSeconds,
                (end - start) / 1e3,
                s.taskMetrics().shuffleWriteMetrics().bytesWritten() >> 20,
                s.taskMetrics().shuffleReadMetrics().totalBytesRead() >> 20,
                s.name()));
    }

    synchronized void clear() {
        lines.clear();
    }

    synchronized void print(String variant, int round) {
        for (String l : lines) System.out.printf(Locale.ROOT, "STAGE %s %d %s%n", variant, round, l);
    }
}
