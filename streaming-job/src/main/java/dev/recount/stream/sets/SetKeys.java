package dev.recount.stream.sets;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.api.java.tuple.Tuple3;

/**
 * How the keyed operators key a set's rows: (set, dimension values) as two strings, so that the keys — and with them
 * the state of checkpoints — of the default set are exactly the previous release's (campaign_id, channel_id), and that
 * release's keyed state (and timers) restore as the default set's with Flink's own tuple serializers, on any state
 * backend, with no conversion.
 *
 * <ul>
 *   <li>the default set: {@code (campaign_id, channel_id)};</li>
 *   <li>any other set: {@code ("\0" + set, d1 + "\0" + d2 + ...)}.</li>
 * </ul>
 *
 * Unambiguous because no dimension value holds a control character (every one is held to the id rule, core's
 * {@code EventValidator}) nor is blank: a first part starting with NUL names a set, any other is a campaign id.
 */
public final class SetKeys {
    /** What the first part of every non-default set's key starts with: a character no dimension value holds. */
    static final char MARK = '\u0000';

    private static final String SEPARATOR = String.valueOf(MARK);

    /** The window operator's key type: (first part, second part). */
    public static final TypeInformation<Tuple2<String, String>> WINDOW_KEY = Types.TUPLE(Types.STRING, Types.STRING);
    /** The attribution windows' key type: (window start, first part, second part). */
    public static final TypeInformation<Tuple3<Long, String, String>> ATTRIBUTION_KEY =
            Types.TUPLE(Types.LONG, Types.STRING, Types.STRING);

    private SetKeys() {}

    /** The first part of the keys of the (non-default) set named {@code set}. */
    static String prefix(String set) {
        return MARK + set;
    }

    /** Whether a key whose first part is {@code first} is the default set's. */
    static boolean isDefault(String first) {
        return first.isEmpty() || first.charAt(0) != MARK;
    }

    /** The first part of a key of {@code set}'s row with dimension values {@code dims}. */
    public static String first(SetRules set, String[] dims) {
        if (set.set().isDefault()) {
            requireDefaultDimensions(dims);
            return dims[0];
        }
        return prefix(set.name());
    }

    /** The second part of a key of {@code set}'s row with dimension values {@code dims}. */
    public static String second(SetRules set, String[] dims) {
        if (set.set().isDefault()) {
            requireDefaultDimensions(dims);
            return dims[1];
        }
        if (dims.length == 1) return dims[0];
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < dims.length; i++) {
            if (i > 0) b.append(MARK);
            b.append(dims[i]);
        }
        return b.toString();
    }

    public static Tuple2<String, String> windowKey(SetRules set, String[] dims) {
        return Tuple2.of(first(set, dims), second(set, dims));
    }

    public static Tuple3<Long, String, String> attributionKey(SetRules set, long windowStart, String[] dims) {
        return Tuple3.of(windowStart, first(set, dims), second(set, dims));
    }

    /** The dimension values of a key of {@code set} with parts {@code first} and {@code second}. */
    public static String[] dimensions(SetRules set, String first, String second) {
        if (set.set().isDefault()) return new String[] {first, second};
        String[] dims = set.set().dimensions().size() == 1 ? new String[] {second} : second.split(SEPARATOR, -1);
        if (dims.length != set.set().dimensions().size()) {
            throw new IllegalStateException("a key of set " + set.name() + " holds " + dims.length
                    + " dimension values, the set has " + set.set().dimensions().size());
        }
        return dims;
    }

    private static void requireDefaultDimensions(String[] dims) {
        if (dims.length != 2) {
            throw new IllegalStateException(
                    "the default set has two dimensions (campaign_id, channel_id), got " + dims.length + " values");
        }
    }
}
