package dev.recount.core.cli;

import dev.recount.core.config.ConfigException;
import java.io.PrintWriter;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.BiFunction;
import java.util.function.ToIntFunction;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;

/**
 * The command-line behaviour every recount command shares, so that {@code ./recount} is one tool:
 * <ul>
 *   <li>every usage error (unknown command or option, unreadable value, a bad setting, see {@link UsageException})
 *       exits {@link CommonExitCodes#USAGE 2};</li>
 *   <li>errors are one line on stderr: {@code recount <command>: <reason>};</li>
 *   <li>every command and subcommand has {@code --help} and {@code --version} (the build's version), and its
 *       {@code --help} lists the exit codes of the command's exit-code class ({@link ExitCodeMeaning}), or of its
 *       own class when that declares exit-code constants itself.</li>
 * </ul>
 * A module's main builds its picocli {@link CommandLine}, passes it through {@link #configure}, and calls
 * {@link #execute}; {@code System.exit} happens only in the main.
 */
public final class RecountCli {
    private final CommandLine commandLine;
    private Class<?> exitCodes = CommonExitCodes.class;
    private ToIntFunction<Throwable> failureCodes = ex -> CommonExitCodes.FAILED;
    private BiFunction<Throwable, String, String> reasons = (failure, reason) -> reason;

    private RecountCli(CommandLine commandLine) {
        this.commandLine = Objects.requireNonNull(commandLine, "commandLine");
    }

    /** Starts configuring {@code commandLine}, a command tree whose subcommands are all added already. */
    public static RecountCli configure(CommandLine commandLine) {
        return new RecountCli(commandLine);
    }

    /** The class whose {@link ExitCodeMeaning}-annotated constants are the command's exit codes (default: {@link CommonExitCodes}). */
    public RecountCli exitCodes(Class<?> exitCodesClass) {
        this.exitCodes = Objects.requireNonNull(exitCodesClass, "exitCodesClass");
        exitCodeList(exitCodesClass); // fail now, not on the first --help, when the class is not well formed
        return this;
    }

    /**
     * The exit code of a command that failed with an exception other than a usage error (default: always
     * {@link CommonExitCodes#FAILED}); e.g. "refused" or "lock timeout" exceptions have codes of their own.
     */
    public RecountCli failureCodes(ToIntFunction<Throwable> exitCodeOfFailure) {
        this.failureCodes = Objects.requireNonNull(exitCodeOfFailure, "exitCodeOfFailure");
        return this;
    }

    /**
     * Rewrites a failure's reason before it is printed, given the failure and its {@link #reason}: e.g. to name
     * recount's flag where a framework names its own, or to say "refused" rather than "failed".
     */
    public RecountCli reasons(BiFunction<Throwable, String, String> rewrite) {
        this.reasons = Objects.requireNonNull(rewrite, "rewrite");
        return this;
    }

    /** Applies the shared behaviour to every command of the tree and returns the command line. */
    public CommandLine commandLine() {
        Map<String, String> codes = exitCodeList(exitCodes);
        CommandSpec root = commandLine.getCommandSpec();
        // A module's root (backfill, reconcile) is a command of ./recount: its usage line says so too.
        if (!root.name().equals("recount") && !root.name().startsWith("recount ")) root.name("recount " + root.name());
        applyToTree(root, codes);
        commandLine.setParameterExceptionHandler((ex, args) -> {
            CommandLine failed = ex.getCommandLine();
            String path = path(failed.getCommandSpec());
            failed.getErr().println(path + ": " + oneLine(ex.getMessage()) + " (see " + path + " --help)");
            failed.getErr().flush();
            return CommonExitCodes.USAGE;
        });
        commandLine.setExitCodeExceptionMapper(this::exitCodeOf);
        commandLine.setExecutionExceptionHandler((ex, failed, parseResult) -> {
            failed.getErr().println(path(failed.getCommandSpec()) + ": " + reasons.apply(ex, reason(ex)));
            failed.getErr().flush();
            return exitCodeOf(ex);
        });
        return commandLine;
    }

    private int exitCodeOf(Throwable ex) {
        if (isUsageError(ex)) return CommonExitCodes.USAGE;
        return failureCodes.applyAsInt(ex);
    }

    /** Runs {@code args} in-process with output and errors captured by {@code out} and {@code err}; returns the exit code. */
    public static int execute(CommandLine commandLine, PrintWriter out, PrintWriter err, String... args) {
        commandLine.setOut(out);
        commandLine.setErr(err);
        try {
            return commandLine.execute(args);
        } finally {
            out.flush();
            err.flush();
        }
    }

    /** {@code execute} on the process's stdout and stderr: what a main calls before {@code System.exit}. */
    public static int execute(CommandLine commandLine, String... args) {
        return execute(commandLine, new PrintWriter(System.out, true), new PrintWriter(System.err, true), args);
    }

    /** How users type the command: {@code recount backfill range}, whatever its root is named inside its module. */
    public static String path(CommandSpec spec) {
        String qualified = spec.qualifiedName(" ");
        return qualified.equals("recount") || qualified.startsWith("recount ") ? qualified : "recount " + qualified;
    }

    /** True for a failure that is the user's input, not the run: it exits 2 like a parse error. */
    static boolean isUsageError(Throwable ex) {
        for (Throwable t = ex; t != null; t = t.getCause()) {
            if (t instanceof UsageException || t instanceof ConfigException || t instanceof ParameterException)
                return true;
        }
        return false;
    }

    /**
     * What a user can act on, on one line: the first message in the cause chain from recount itself or an argument
     * check; else the innermost message, named by its exception type (a framework's own failure).
     */
    public static String reason(Throwable ex) {
        for (Throwable t = ex; t != null; t = t.getCause()) {
            boolean ours = t.getClass().getName().startsWith("dev.recount.")
                    || t instanceof IllegalArgumentException
                    || t instanceof IllegalStateException;
            if (ours && hasMessage(t)) return oneLine(t.getMessage());
        }
        Throwable innermost = ex;
        for (Throwable t = ex; t != null; t = t.getCause()) {
            if (hasMessage(t)) innermost = t;
        }
        return oneLine(
                innermost.getClass().getSimpleName() + (hasMessage(innermost) ? ": " + innermost.getMessage() : ""));
    }

    /** A message on one line (stack traces and multi-line messages would break "one line per error"). */
    public static String oneLine(String message) {
        return message == null ? "" : message.replaceAll("\\s*\\R\\s*", " ").strip();
    }

    /** The exit codes of {@code exitCodesClass}, code to meaning, in code order: what {@code --help} lists. */
    public static Map<String, String> exitCodeList(Class<?> exitCodesClass) {
        Map<Integer, String> byCode = new TreeMap<>();
        for (Field f : exitCodesClass.getDeclaredFields()) {
            int m = f.getModifiers();
            if (!Modifier.isStatic(m) || !Modifier.isFinal(m) || f.getType() != int.class) continue;
            ExitCodeMeaning meaning = f.getAnnotation(ExitCodeMeaning.class);
            if (meaning == null) {
                throw new IllegalArgumentException(exitCodesClass.getName() + "." + f.getName()
                        + " has no @ExitCodeMeaning: every exit code must say what it means");
            }
            int code;
            try {
                f.setAccessible(true);
                code = f.getInt(null);
            } catch (IllegalAccessException e) {
                throw new IllegalArgumentException("cannot read " + exitCodesClass.getName() + "." + f.getName(), e);
            }
            String earlier = byCode.put(code, meaning.value());
            if (earlier != null) {
                throw new IllegalArgumentException(
                        exitCodesClass.getName() + " gives exit code " + code + " two meanings");
            }
        }
        for (int shared : new int[] {CommonExitCodes.OK, CommonExitCodes.FAILED, CommonExitCodes.USAGE}) {
            if (!byCode.containsKey(shared)) {
                throw new IllegalArgumentException(exitCodesClass.getName() + " lacks the shared exit code " + shared);
            }
        }
        Map<String, String> list = new LinkedHashMap<>();
        byCode.forEach((code, meaning) -> list.put(String.format("%3d", code), meaning));
        return list;
    }

    private static void applyToTree(CommandSpec spec, Map<String, String> codes) {
        if (spec.optionsMap().get("--version") == null && spec.optionsMap().get("--help") == null) {
            spec.mixinStandardHelpOptions(true);
        }
        if (spec.optionsMap().get("--version") == null) {
            throw new IllegalStateException(path(spec) + " defines --help itself but not --version; let "
                    + RecountCli.class.getSimpleName() + " add both");
        }
        spec.versionProvider(new RecountVersion());
        Map<String, String> own = ownExitCodes(spec);
        Map<String, String> effective = own != null ? own : codes;
        spec.usageMessage().exitCodeListHeading("%nExit codes:%n").exitCodeList(effective);
        for (CommandLine sub : spec.subcommands().values()) applyToTree(sub.getCommandSpec(), effective);
    }

    /** A command class that declares {@link ExitCodeMeaning} constants itself has those codes (and its subcommands). */
    private static Map<String, String> ownExitCodes(CommandSpec spec) {
        Object user = spec.userObject();
        if (user == null) return null;
        Class<?> type = user instanceof Class<?> c ? c : user.getClass();
        for (Field f : type.getDeclaredFields()) {
            if (f.isAnnotationPresent(ExitCodeMeaning.class)) return exitCodeList(type);
        }
        return null;
    }

    private static boolean hasMessage(Throwable t) {
        return t.getMessage() != null && !t.getMessage().isBlank();
    }
}
