package dev.recount.testkit;

import java.io.IOException;

/** Signals to processes, as an operator sends them: kill -9, and SIGSTOP/SIGCONT to freeze a service and thaw it. */
public final class Signals {
    private Signals() {}

    /** {@code kill -<signal> <pid>}; fails unless it was delivered (the process exists). */
    public static void send(String signal, long pid) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + signal, String.valueOf(pid))
                .inheritIO()
                .start();
        int exit = kill.waitFor();
        if (exit != 0) throw new IllegalStateException("kill -" + signal + " " + pid + " exited " + exit);
    }
}
