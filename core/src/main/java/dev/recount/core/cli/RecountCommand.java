package dev.recount.core.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The root of every recount command line: {@code recount}, whose subcommands are the commands one module runs (the
 * launcher starts each module in its own JVM, as {@code <main> <command> [options]}). A module's main builds its tree
 * with {@link RecountCli#of}; alone, the root is a usage error that names its commands.
 */
@Command(name = "recount")
public final class RecountCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(
                spec.commandLine(),
                "missing command: " + String.join(", ", spec.subcommands().keySet()));
    }
}
