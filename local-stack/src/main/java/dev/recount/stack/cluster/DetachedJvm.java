package dev.recount.stack.cluster;

import dev.recount.stack.embedded.ProcessProbe;
import dev.recount.stack.embedded.StackException;
import dev.recount.stack.embedded.StackFiles;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * One framework process of a local cluster (a JobManager, a TaskManager, a Spark Master or Worker): a detached JVM in
 * its own session (a Ctrl-C that ends {@code up} leaves it alone), its output appended to a log, its pid in a file.
 * It carries {@code -Drecount.process=<identity>} on its command line, so a pid that the kernel gave to another process
 * after a crash is never taken for it.
 */
final class DetachedJvm {
    /** What a framework process must not inherit from {@code up}: the administrator's or a component's password. */
    private static final java.util.regex.Pattern SECRET_VARIABLE = java.util.regex.Pattern.compile("(?i).*PGPASSWORD");

    private final String name;
    private final Path pidFile;
    private final String identity;

    /**
     * @param name     what status prints, e.g. "flink taskmanager 1"
     * @param identity unique on this machine: the process's marker, e.g. "/home/u/.recount/clusters:taskmanager-1"
     */
    DetachedJvm(String name, Path pidFile, String identity) {
        this.name = name;
        this.pidFile = pidFile;
        this.identity = identity;
    }

    String name() {
        return name;
    }

    String marker() {
        return "-Drecount.process=" + identity;
    }

    /** The pid while our process runs; a recycled pid of some other process does not count. */
    OptionalLong runningPid() {
        OptionalLong pid = StackFiles.readPid(pidFile);
        if (pid.isEmpty()) return pid;
        Optional<List<String>> cmd = ProcessProbe.commandLine(pid.getAsLong());
        return cmd.isPresent() && cmd.get().contains(marker()) ? pid : OptionalLong.empty();
    }

    /** The pid a process that is gone left behind (killed, crashed). */
    OptionalLong stalePid() {
        return runningPid().isPresent() ? OptionalLong.empty() : StackFiles.readPid(pidFile);
    }

    /**
     * Starts {@code java <jvmOptions> -cp <classpath> <mainClass> <args>} in {@code workDir}, with this process's
     * environment less any password variable, plus {@code environment}. Returns its pid; does not wait.
     */
    long start(
            List<String> jvmOptions,
            String classpath,
            String mainClass,
            List<String> args,
            Map<String, String> environment,
            Path workDir,
            Path log) {
        List<String> cmd = new ArrayList<>();
        onPath("setsid").ifPresent(p -> cmd.add(p.toString()));
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add(marker());
        cmd.addAll(jvmOptions);
        cmd.add("-cp");
        cmd.add(classpath);
        cmd.add(mainClass);
        cmd.addAll(args);
        try {
            Files.createDirectories(workDir);
            Files.createDirectories(log.getParent());
            ProcessBuilder pb = new ProcessBuilder(cmd)
                    .directory(workDir.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
            pb.environment().keySet().removeIf(k -> SECRET_VARIABLE.matcher(k).matches());
            pb.environment().putAll(environment);
            Process p = pb.start();
            // Recorded at once so that `down` finds it even if this `up` dies before the cluster answers.
            StackFiles.writeAtomically(pidFile, p.pid() + "\n", false);
            return p.pid();
        } catch (IOException e) {
            throw new StackException("cannot start the " + name + " JVM: " + e.getMessage(), e);
        }
    }

    /** SIGTERM (the framework's own orderly shutdown), then SIGKILL after {@code timeout}. @return whether it ran */
    boolean stop(Duration timeout) {
        OptionalLong pid = runningPid();
        if (pid.isPresent()) {
            ProcessHandle.of(pid.getAsLong()).ifPresent(ProcessHandle::destroy);
            if (!ProcessProbe.awaitExit(pid.getAsLong(), timeout)) {
                ProcessHandle.of(pid.getAsLong()).ifPresent(ProcessHandle::destroyForcibly);
                if (!ProcessProbe.awaitExit(pid.getAsLong(), Duration.ofSeconds(10))) {
                    throw new StackException(
                            "the " + name + " (pid " + pid.getAsLong() + ") does not stop, not even on SIGKILL");
                }
            }
        }
        try {
            Files.deleteIfExists(pidFile);
        } catch (IOException e) {
            throw new StackException("cannot remove " + pidFile + ": " + e.getMessage(), e);
        }
        return pid.isPresent();
    }

    private static Optional<Path> onPath(String program) {
        String path = System.getenv("PATH");
        if (path == null) return Optional.empty();
        for (String dir : path.split(File.pathSeparator)) {
            if (dir.isEmpty()) continue;
            Path candidate = Path.of(dir, program);
            if (Files.isExecutable(candidate)) return Optional.of(candidate);
        }
        return Optional.empty();
    }
}
