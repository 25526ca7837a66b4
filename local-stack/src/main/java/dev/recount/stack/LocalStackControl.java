package dev.recount.stack;

import dev.recount.core.config.LocalEnvFile;
import dev.recount.core.config.RecountConfig;
import dev.recount.stack.cluster.ClusterClasspaths;
import dev.recount.stack.cluster.LocalClusters;
import dev.recount.stack.embedded.EmbeddedStack;
import dev.recount.stack.embedded.StackLayout;
import dev.recount.stack.embedded.UpSettings;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * {@code up} and {@code down} as a Java API: the embedded Kafka and PostgreSQL, the local clusters when asked for,
 * and local.env kept in step with what runs. The commands print what this returns; the demo calls it directly.
 */
public final class LocalStackControl {
    private final StackLayout layout;
    private final Consumer<String> progress;

    /** @param progress receives one line per step, for people watching */
    public LocalStackControl(StackLayout layout, Consumer<String> progress) {
        this.layout = layout;
        this.progress = progress;
    }

    public StackLayout layout() {
        return layout;
    }

    /**
     * What {@link #up} did.
     *
     * @param stack    the embedded services: whether they already ran, topics, schema version, logins
     * @param clusters what the local clusters' start did, when they were asked for
     */
    public record Up(EmbeddedStack.UpResult stack, Optional<LocalClusters.UpResult> clusters) {
        /** Whether this call started nothing of the embedded stack (it ran already). */
        public boolean wasRunning() {
            return stack.wasRunning();
        }
    }

    /**
     * Starts what does not run and waits until it answers, then writes local.env (with the local clusters' addresses
     * while they run, also when this call did not start them).
     *
     * @param config       the settings ({@code local.*}, {@code topics.*}, {@code postgres.*})
     * @param timeout      how long each part may take to answer
     * @param withClusters also start the local Flink and Spark standalone clusters
     */
    public Up up(RecountConfig config, Duration timeout, boolean withClusters) {
        EmbeddedStack.UpResult stack = new EmbeddedStack(layout, progress).up(UpSettings.from(config, timeout));
        LocalClusters clusters = new LocalClusters(layout);
        Optional<LocalClusters.UpResult> clustersUp = Optional.empty();
        if (withClusters) {
            clustersUp = Optional.of(clusters.up(
                    ClusterClasspaths.fromBuild(),
                    timeout,
                    progress,
                    stack.status().kafka().port(),
                    stack.status().postgres().port()));
        }
        if (withClusters || clusters.configured() && !clusters.noneRunning()) {
            // The embedded stack's up rewrote local.env; the clusters' addresses belong in it while they run.
            LocalEnvFile.amend(layout.envFile(), clusters.environment(), List.of());
        }
        return new Up(stack, clustersUp);
    }

    /**
     * What {@link #down} stopped.
     *
     * @param clusters          the cluster processes stopped (empty when none ran)
     * @param services          the embedded services stopped (empty when none ran, or when only clusters were asked)
     * @param clustersConfigured whether {@code up --cluster} ever ran in this home
     */
    public record Down(List<String> clusters, List<String> services, boolean clustersConfigured) {}

    /**
     * Stops the local clusters first (they use Kafka and PostgreSQL), then, unless {@code clustersOnly}, the embedded
     * services. The data stays for the next {@link #up}; local.env loses the clusters' addresses.
     */
    public Down down(boolean clustersOnly) {
        LocalClusters clusters = new LocalClusters(layout);
        boolean configured = clusters.configured();
        List<String> clustersStopped = List.of();
        if (configured) {
            clustersStopped = clusters.down();
            LocalEnvFile.amend(
                    layout.envFile(), Map.of(), clusters.environment().keySet());
        }
        if (clustersOnly) return new Down(clustersStopped, List.of(), configured);
        return new Down(clustersStopped, new EmbeddedStack(layout, progress).down(), configured);
    }
}
