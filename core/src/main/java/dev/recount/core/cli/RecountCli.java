package dev.recount.core.cli;

import dev.recount.core.config.ConfigException;
import java.io.PrintWriter;
import java.lang.reflect.Constructor;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.BiFunction;
import picocli.CommandLine;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;

/**
 * The command-line behaviour every recount command shares, so that {@code ./recount} is one tool:
 * <ul>
 *   <li>one root, {@code recount} ({@link RecountCommand}), under which each module's main puts its commands
 *       ({@link #of});</li>
 *   <li>one table of exit codes ({@link ExitCode}): a usage error (unknown command or option, unreadable value, a bad
 *       setting, see {@link UsageException}) exits 2; a failure exits with its {@link CodedFailure} code, else 1;
 *       {@code --help} lists each command's codes ({@link ExitsWith});</li>
 *   <li>one way to say something on stderr: one line, {@code recount <command>: <reason>} ({@link #err});</li>
 *   <li>every command and subcommand has {@code --help} and {@code --version} (the build's version);</li>
 *   <li>old option spellings ({@link OldName}) still work, with one warning line; {@code --wait} reads the same
 *       everywhere ({@link WaitsFor}).</li>
 * </ul>
 * A module's main builds its tree with {@link #of}, and calls {@link #execute}; {@code System.exit} happens only in
 * the main.
 */
public final class RecountCli {
    private final CommandLine commandLine;
    private BiFunction<Throwable, String, String> reasons = (failure, reason) -> reason;
    /** The hidden options standing for old spellings, to warn about when used. */
    private final Map<OptionSpec, OldName> oldNames = new IdentityHashMap<>();

    private RecountCli(CommandLine commandLine) {
        this.commandLine = Objects.requireNonNull(commandLine, "commandLine");
    }

    /**
     * The root {@code recount} with {@code commands} (command objects, or classes picocli instantiates) under it;
     * {@code description} says what this module's commands are, in the root's {@code --help}.
     */
    public static RecountCli of(String description, Object... commands) {
        return of(description, CommandLine.defaultFactory(), commands);
    }

    /** {@link #of(String, Object...)} with {@code factory} creating the command classes (and their subcommands). */
    public static RecountCli of(String description, CommandLine.IFactory factory, Object... commands) {
        CommandLine root = new CommandLine(new RecountCommand(), factory);
        root.getCommandSpec().usageMessage().description(description);
        for (Object command : commands) root.addSubcommand(command);
        return new RecountCli(root);
    }

    /**
     * A main that runs one command as its root ({@code recount backfill}, {@code recount reconcile}): its arguments
     * start with the command's own subcommand or options, as its deployments call it ({@code BackfillMain nightly}
     * in a SparkApplication). {@code command} is a command object or a class {@code factory} creates.
     */
    public static RecountCli single(CommandLine.IFactory factory, Object command) {
        CommandLine root =
                command instanceof Class<?> type ? new CommandLine(type, factory) : new CommandLine(command, factory);
        // Its usage line says how users type it: "Usage: recount backfill range ...".
        CommandSpec spec = root.getCommandSpec();
        if (!spec.name().startsWith("recount ")) spec.name("recount " + spec.name());
        return new RecountCli(root);
    }

    /**
     * Rewrites a failure's reason before it is printed, given the failure and its {@link #reason}: e.g. to name
     * recount's flag where a framework names its own.
     */
    public RecountCli reasons(BiFunction<Throwable, String, String> rewrite) {
        this.reasons = Objects.requireNonNull(rewrite, "rewrite");
        return this;
    }

    /** Applies the shared behaviour to every command of the tree and returns the command line. */
    public CommandLine commandLine() {
        applyToTree(commandLine.getCommandSpec(), exitCodeList(exitCodes(null)));
        commandLine.setParameterExceptionHandler((ex, args) -> {
            CommandLine failed = ex.getCommandLine();
            String path = path(failed.getCommandSpec());
            failed.getErr().println(path + ": " + oneLine(ex.getMessage()) + " (see " + path + " --help)");
            failed.getErr().flush();
            return ExitCode.USAGE.code();
        });
        commandLine.setExitCodeExceptionMapper(ex -> exitCodeOf(ex).code());
        commandLine.setExecutionExceptionHandler((ex, failed, parseResult) -> {
            ExitCode code = exitCodeOf(ex);
            String reason = reasons.apply(ex, reason(ex));
            boolean labelled = code.isShared() || reason.startsWith(code.label() + ":");
            err(failed.getCommandSpec(), labelled ? reason : code.label() + ": " + reason);
            return code.code();
        });
        commandLine.setExecutionStrategy(parseResult -> {
            warnAboutOldNames(parseResult);
            return new CommandLine.RunLast().execute(parseResult);
        });
        return commandLine;
    }

    /** The code a failure exits with: 2 for the user's input, its {@link CodedFailure} code, else 1. */
    public static ExitCode exitCodeOf(Throwable ex) {
        if (isUsageError(ex)) return ExitCode.USAGE;
        for (Throwable t = ex; t != null; t = t.getCause()) {
            if (t instanceof CodedFailure coded) return coded.exitCode();
        }
        return ExitCode.FAILED;
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

    /** How users type the command: {@code recount backfill range}. */
    public static String path(CommandSpec spec) {
        String qualified = spec.qualifiedName(" ");
        return qualified.equals("recount") || qualified.startsWith("recount ") ? qualified : "recount " + qualified;
    }

    /**
     * The one way a command says something on stderr, an error or a warning: one line, {@code recount <command>:
     * <line>}, flushed at once (so it is in order with what the process logs).
     */
    public static void err(CommandSpec spec, String line) {
        PrintWriter err = spec.commandLine().getErr();
        err.println(path(spec) + ": " + oneLine(line));
        err.flush();
    }

    /** A line of a command's text output on stdout, under its name as {@link #err} (never with {@code --json}). */
    public static void out(CommandSpec spec, String line) {
        PrintWriter out = spec.commandLine().getOut();
        out.println(path(spec) + ": " + line);
        out.flush();
    }

    /** True for a failure that is the user's input, not the run: it exits 2 like a parse error. */
    public static boolean isUsageError(Throwable ex) {
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

    /**
     * The exit codes of a command class, code to what it means for the command, in code order: the shared three,
     * then what its {@link ExitsWith} annotations say (which may also say more of the shared three).
     */
    public static Map<ExitCode, String> exitCodes(Class<?> commandClass) {
        Map<ExitCode, String> byCode = new EnumMap<>(ExitCode.class);
        for (ExitCode shared : List.of(ExitCode.OK, ExitCode.FAILED, ExitCode.USAGE))
            byCode.put(shared, shared.meaning());
        if (commandClass == null) return byCode;
        Set<ExitCode> seen = EnumSet.noneOf(ExitCode.class);
        for (ExitsWith e : commandClass.getAnnotationsByType(ExitsWith.class)) {
            if (!seen.add(e.code())) {
                throw new IllegalArgumentException(commandClass.getName() + " gives exit code "
                        + e.code().code() + " (" + e.code().label() + ") two meanings");
            }
            if (e.when().isBlank())
                throw new IllegalArgumentException(
                        commandClass.getName() + " says nothing of when it exits " + e.code());
            byCode.put(e.code(), e.code().label() + ": " + e.when());
        }
        return byCode;
    }

    /** The list {@code --help} prints ("  4" to what it means). */
    static Map<String, String> exitCodeList(Map<ExitCode, String> codes) {
        Map<String, String> list = new LinkedHashMap<>();
        codes.forEach((code, meaning) -> list.put(String.format("%3d", code.code()), meaning));
        return list;
    }

    /** The old spellings of {@code spec}'s options, from its class's {@link OldName} annotations. */
    static List<OldName> oldNames(CommandSpec spec) {
        Class<?> type = commandClass(spec);
        return type == null ? List.of() : List.of(type.getAnnotationsByType(OldName.class));
    }

    private void applyToTree(CommandSpec spec, Map<String, String> inheritedList) {
        if (spec.optionsMap().get("--version") == null && spec.optionsMap().get("--help") == null) {
            spec.mixinStandardHelpOptions(true);
        }
        if (spec.optionsMap().get("--version") == null) {
            throw new IllegalStateException(path(spec) + " defines --help itself but not --version; let "
                    + RecountCli.class.getSimpleName() + " add both");
        }
        spec.versionProvider(new RecountVersion());
        Class<?> type = commandClass(spec);
        Map<String, String> list = type != null && type.getAnnotationsByType(ExitsWith.class).length > 0
                ? exitCodeList(exitCodes(type))
                : inheritedList;
        spec.usageMessage().exitCodeListHeading("%nExit codes:%n").exitCodeList(list);
        describeWait(spec, type);
        for (OldName old : oldNames(spec)) addOldName(spec, old);
        for (CommandLine sub : new LinkedHashSet<>(spec.subcommands().values()))
            applyToTree(sub.getCommandSpec(), list);
    }

    /** Completes {@link WaitOption}'s {@code --wait} with what the command waits for and its default. */
    private static void describeWait(CommandSpec spec, Class<?> type) {
        OptionSpec wait = spec.findOption("--wait");
        boolean mixedIn = spec.mixins().values().stream().anyMatch(m -> m.userObject() instanceof WaitOption);
        if (!mixedIn) return;
        WaitsFor waitsFor = type == null ? null : type.getAnnotation(WaitsFor.class);
        if (waitsFor == null) {
            throw new IllegalStateException(path(spec) + " takes --wait but does not say what for (@WaitsFor)");
        }
        OptionSpec described = wait.toBuilder()
                .description("How long to wait for " + waitsFor.value() + " before giving up (default: "
                        + waitsFor.byDefault() + ").")
                .defaultValue(waitsFor.byDefault())
                .build();
        spec.remove(wait);
        spec.addOption(described);
    }

    /** A hidden option for the old spelling that sets what the new option sets, converting its value if it must. */
    private void addOldName(CommandSpec spec, OldName old) {
        OptionSpec now = spec.findOption(old.now());
        if (now == null) {
            throw new IllegalStateException(path(spec) + ": @OldName " + old.name() + " names " + old.now()
                    + ", which the command does not have");
        }
        if (spec.findOption(old.name()) != null) {
            throw new IllegalStateException(path(spec) + ": " + old.name() + " is an option already");
        }
        OptionSpec.Builder alias = OptionSpec.builder(old.name())
                .hidden(true)
                .arity(now.arity().toString())
                .type(now.type())
                .auxiliaryTypes(now.auxiliaryTypes())
                .paramLabel(old.paramLabel().isEmpty() ? now.paramLabel() : old.paramLabel())
                .description("Deprecated: use " + old.now() + ".")
                .hasInitialValue(false)
                .getter(now.getter())
                .setter(now.setter());
        alias.converters(
                old.converter() == OldName.SameValue.class
                        ? now.converters()
                        : new ITypeConverter<?>[] {instance(old)});
        OptionSpec added = alias.build();
        spec.addOption(added);
        oldNames.put(added, old);
    }

    private static ITypeConverter<?> instance(OldName old) {
        try {
            Constructor<? extends ITypeConverter<?>> c = old.converter().getDeclaredConstructor();
            c.setAccessible(true);
            return c.newInstance();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot make the converter of " + old.name(), e);
        }
    }

    /** One line per old spelling used: {@code recount reconcile pending: --days is deprecated, use --since}. */
    private void warnAboutOldNames(ParseResult parseResult) {
        for (ParseResult pr = parseResult; pr != null; pr = pr.subcommand()) {
            List<String> said = new ArrayList<>();
            for (OptionSpec matched : pr.matchedOptions()) {
                OldName old = oldNames.get(matched);
                if (old == null || said.contains(old.name())) continue;
                said.add(old.name());
                String how = old.means().isEmpty() ? "" : " (" + old.means() + ")";
                err(pr.commandSpec(), old.name() + " is deprecated, use " + old.now() + how);
            }
        }
    }

    private static Class<?> commandClass(CommandSpec spec) {
        Object user = spec.userObject();
        if (user == null) return null;
        return user instanceof Class<?> c ? c : user.getClass();
    }

    private static boolean hasMessage(Throwable t) {
        return t.getMessage() != null && !t.getMessage().isBlank();
    }
}
