package dev.recount.core.cli;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * What a command with {@link WaitOption} waits for, and for how long by default, on its class: {@code
 * @WaitsFor(value = "both services to answer", byDefault = "2m")}. {@link RecountCli} writes them into the
 * {@code --wait} option's description and default, so every command's {@code --wait} reads the same.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface WaitsFor {
    /** What is awaited, completing "how long to wait for ...". */
    String value();

    /** The default, a duration ({@code 0s}: give up at once). */
    String byDefault();
}
