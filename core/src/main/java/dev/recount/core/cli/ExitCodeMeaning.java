package dev.recount.core.cli;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * What an exit-code constant means to the person or scheduler that ran the command. {@link RecountCli} lists the
 * annotated {@code public static final int} constants of a command's exit-code class in its {@code --help}, so the
 * constants the code returns and the list users read are one and the same.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.FIELD)
public @interface ExitCodeMeaning {
    String value();
}
