package dev.recount.core.cli;

import java.lang.annotation.ElementType;
import java.lang.annotation.Repeatable;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import picocli.CommandLine.ITypeConverter;

/**
 * An option's former spelling, still accepted for one release: on the command's class, {@code @OldName(name =
 * "--wait-for-backfill", now = "--wait")}. {@link RecountCli} adds it as a hidden option that sets what the new one
 * sets, and a command line that uses it prints one line on stderr: {@code recount <command>: --wait-for-backfill is
 * deprecated, use --wait}. docs/contract.md, "Changes", lists every one (its test reads these annotations).
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
@Repeatable(OldName.List.class)
public @interface OldName {
    /** The old spelling, e.g. {@code --wait-for-backfill}. */
    String name();

    /** The option it became, e.g. {@code --wait}. */
    String now();

    /**
     * How the old spelling's value becomes the new option's, when the two differ (default: the new option's own):
     * {@code --days 7} is {@code --since 7d}.
     */
    Class<? extends ITypeConverter<?>> converter() default SameValue.class;

    /** The old spelling's parameter label in messages, when it differs from the new option's. */
    String paramLabel() default "";

    /** How an old value reads in the new spelling, when it differs, for the warning: "--days N is --since Nd". */
    String means() default "";

    /** The marker for "convert as the new option does". */
    final class SameValue implements ITypeConverter<Object> {
        private SameValue() {}

        @Override
        public Object convert(String value) {
            throw new UnsupportedOperationException("a marker, never called");
        }
    }

    /** The container of repeated {@link OldName}. */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.TYPE)
    @interface List {
        OldName[] value();
    }
}
