package dev.recount.stack.cluster;

import dev.recount.stack.embedded.StackException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The JVM options and resolved memory settings of a JobManager or TaskManager, derived from config.yaml by Flink's own
 * {@code BashJavaUtils} — what the distribution's {@code jobmanager.sh} / {@code taskmanager.sh} do before they start
 * a process. A TaskManager refuses to start without them ({@code taskmanager.cpu.cores} and every memory pool must be
 * set explicitly), and the JVM's heap and direct memory limits must match them.
 *
 * @param jvmOptions  e.g. -Xmx..., -XX:MaxDirectMemorySize=...
 * @param dynamicArgs e.g. -D, taskmanager.memory.task.heap.size=...b, ...
 */
record FlinkProcessMemory(List<String> jvmOptions, List<String> dynamicArgs) {
    private static final String RESULT = "BASH_JAVA_UTILS_EXEC_RESULT:";

    static FlinkProcessMemory taskManager(String classpath, Path confDir) {
        return resolve(classpath, confDir, "GET_TM_RESOURCE_PARAMS");
    }

    static FlinkProcessMemory jobManager(String classpath, Path confDir) {
        return resolve(classpath, confDir, "GET_JM_RESOURCE_PARAMS");
    }

    private static FlinkProcessMemory resolve(String classpath, Path confDir, String command) {
        List<String> cmd = List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m",
                "-cp",
                classpath,
                "org.apache.flink.runtime.util.bash.BashJavaUtils",
                command,
                "--configDir",
                confDir.toString());
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(1, TimeUnit.MINUTES) || p.exitValue() != 0) {
                throw new StackException(
                        "Flink could not derive its memory settings from " + confDir + ": " + output.strip());
            }
            List<String> results = new ArrayList<>();
            for (String line : output.split("\\R")) {
                if (line.startsWith(RESULT))
                    results.add(line.substring(RESULT.length()).strip());
            }
            if (results.size() < 2)
                throw new StackException("unexpected output of Flink's BashJavaUtils: " + output.strip());
            return new FlinkProcessMemory(split(results.get(0)), split(results.get(1)));
        } catch (IOException e) {
            throw new StackException("cannot run Flink's BashJavaUtils: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StackException("interrupted while deriving Flink's memory settings");
        }
    }

    private static List<String> split(String line) {
        return line.isBlank() ? List.of() : Arrays.asList(line.split("\\s+"));
    }
}
