package dev.recount.core.sets;

import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The names a definitions file gives (sets, attributes, dimensions, measures, ratios) become SQL identifiers:
 * columns, tables and functions. Only strict ones are accepted, so that no name ever needs quoting, folds case, or
 * reaches SQL as anything but a name.
 */
public final class Identifiers {
    /** Lower-case ASCII letter first, then letters, digits and underscores. */
    public static final Pattern STRICT = Pattern.compile("[a-z][a-z0-9_]*");

    /**
     * Longest set name. Every object of a set is named {@code <set>__<name>} ({@link #SET_SEPARATOR}); the longest
     * such name recount makes is a partition of the corrections, {@code <set>__wc_<from>_<to>} with two 13-character
     * instants, which must fit PostgreSQL's 63 bytes.
     */
    public static final int MAX_SET_NAME = 24;

    /** Longest name of a column (dimension, measure, ratio, attribute): its {@code stream_}/{@code batch_} forms fit. */
    public static final int MAX_COLUMN_NAME = 48;

    /** Separates a set's name from the object it prefixes: set names never hold it, so no two sets' names meet. */
    public static final String SET_SEPARATOR = "__";

    /**
     * Columns every set's tables, views and functions have besides its dimensions and measures; a dimension, measure
     * or ratio of that name would collide with one of them. The db module's generator takes its tables' own columns
     * from here, and its tests check that every column it makes is a set's own or one of these.
     */
    public static final Set<String> RESERVED_COLUMNS = Set.of(
            "window_start",
            "window_end",
            "revision",
            "updated_at",
            "run_id",
            "computed_at",
            "removed",
            "reconciliation_run_id",
            "batch_run_id",
            "finalized_at",
            "source",
            "is_final",
            "status",
            "within_tolerance",
            "period_start",
            "period_end",
            "windows",
            "log_id",
            "metric",
            "before_value",
            "after_value",
            "reason",
            "logged_at",
            "lake_rows",
            "metric_set",
            "write_id",
            "side",
            "written_at",
            // reconciled_windows' batch_keys, batch_fingerprint, ...: a measure of these names would meet them
            "keys",
            "fingerprint",
            "min_window_end",
            "max_window_end",
            // the attribution tables' measures, next to a set's dimensions
            "attributed_clicks",
            "attributed_conversions",
            "unattributed_clicks",
            "attributed_spend_micros");

    /** Prefixes of the comparison's columns ({@code stream_clicks}, {@code batch_clicks}, {@code final_clicks}). */
    public static final List<String> RESERVED_PREFIXES = List.of("stream_", "batch_", "final_");

    private Identifiers() {}

    /** Why {@code name} is not a strict identifier of at most {@code maxLength} characters, or null when it is. */
    public static String problem(String name, int maxLength) {
        if (name == null || name.isEmpty()) return "a name must not be empty";
        if (!STRICT.matcher(name).matches()) {
            return "'" + name + "' is not a strict SQL identifier: a lower-case letter, then lower-case letters,"
                    + " digits and _ ([a-z][a-z0-9_]*)";
        }
        if (name.length() > maxLength) {
            return "'" + name + "' is " + name.length() + " characters long; at most " + maxLength + " are allowed";
        }
        return null;
    }

    /** {@link #problem} for a set name, which also may not hold {@link #SET_SEPARATOR} or end with '_'. */
    public static String setNameProblem(String name) {
        String problem = problem(name, MAX_SET_NAME);
        if (problem != null) return problem;
        if (name.contains(SET_SEPARATOR) || name.endsWith("_")) {
            return "'" + name + "' may not contain '__' or end with '_': it prefixes the set's tables as " + name
                    + "__<table>";
        }
        return null;
    }
}
