package dev.recount.reconcile.report;

import dev.recount.core.sets.DerivedRatio;
import dev.recount.core.sets.EventField;
import dev.recount.core.sets.Measure;
import dev.recount.core.sets.MetricSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * How the report names and shows a metric set's dimensions, measures and ratios, derived from their definitions by
 * one rule each, so that every set's report reads alike and the default set's reads as it always has ("Campaign",
 * "Spend", "Click-through rate (CTR)", per campaign-day).
 */
public final class Labels {
    /**
     * Ratios with a name people know, shown by it: the name is the definition's, so any set declaring a ratio named
     * {@code ctr} gets the same words. Any other ratio is shown by its name.
     */
    private static final Map<String, String[]> KNOWN_RATIOS = Map.of(
            "ctr", new String[] {"Click-through rate (CTR)", "CTR"},
            "cvr", new String[] {"Conversion rate (CVR)", "CVR"},
            "cpc_micros", new String[] {"Cost per click (CPC)", "CPC"},
            "cpm_micros", new String[] {"Cost per thousand impressions (CPM)", "CPM"},
            "cost_per_conversion_micros", new String[] {"Cost per conversion", "Cost per conversion"});

    private Labels() {}

    /** A field's word for people: its name without a trailing {@code _id} ({@code campaign_id} → "campaign"). */
    public static String word(String field) {
        return field.endsWith("_id") && field.length() > 3 ? field.substring(0, field.length() - 3) : field;
    }

    /** {@link #word} with a capital: "Campaign". */
    public static String title(String field) {
        return capitalize(word(field).replace('_', ' '));
    }

    /** The words of every dimension: "campaign, channel". */
    public static String dimensionWords(MetricSet set) {
        return String.join(", ", set.dimensionNames().stream().map(Labels::word).toList());
    }

    /**
     * What the report puts before a set's element ids so that no two sets' meet on one page: nothing for the default
     * set (its ids are as they always were), {@code <set>-} for any other.
     */
    public static String idPrefix(MetricSet set) {
        return set.isDefault() ? "" : set.name() + "-";
    }

    /** "campaign-day": the report's per-day group of the set's first dimension. */
    public static String dayGroup(MetricSet set) {
        return word(set.dimensionNames().get(0)) + "-day";
    }

    /**
     * Whether a measure is money: a sum of the contract's {@code cost_micros}, micro-units of the currency, shown in
     * currency units with six decimals.
     */
    public static boolean isMoney(Measure m) {
        return !m.isCount() && m.field().source() == EventField.Source.COST_MICROS;
    }

    /** A measure's name for people: "Impressions", "Spend" (money, without {@code _micros}), "Device clicks". */
    public static String label(Measure m) {
        return capitalize(moneyWord(m).replace('_', ' '));
    }

    /**
     * The words of a money measure's currency-unit columns: its name without {@code _micros} ({@code spend_micros} →
     * "spend"); any other measure's name.
     */
    public static String moneyWord(Measure m) {
        String n = m.name();
        return isMoney(m) && n.endsWith("_micros") && n.length() > 7 ? n.substring(0, n.length() - 7) : n;
    }

    /**
     * The measure a set's report leads with (its chart, the first columns of its lists, the order of its largest
     * differences): its first money measure, else its first sum, else its first measure. The default set's: spend.
     */
    public static int lead(MetricSet set) {
        List<Measure> ms = set.measures();
        for (int i = 0; i < ms.size(); i++) if (isMoney(ms.get(i))) return i;
        for (int i = 0; i < ms.size(); i++) if (!ms.get(i).isCount()) return i;
        return 0;
    }

    /** The ratio a set's report shows (the range's value and the keys it moved most): its first; null without. */
    public static DerivedRatio shownRatio(MetricSet set) {
        return set.ratios().isEmpty() ? null : set.ratios().get(0);
    }

    /** "Click-through rate (CTR)", or the ratio's name. */
    public static String ratioTitle(DerivedRatio r) {
        String[] known = KNOWN_RATIOS.get(r.name());
        return known == null ? "Ratio " + r.name() : known[0];
    }

    /** "CTR", or the ratio's name. */
    public static String ratioShort(DerivedRatio r) {
        String[] known = KNOWN_RATIOS.get(r.name());
        return known == null ? r.name() : known[1];
    }

    /** Whether a ratio reads as a percentage: a count per count, not scaled ({@code per} 1), like a CTR. */
    public static boolean isPercentage(MetricSet set, DerivedRatio r) {
        return r.per() == 1
                && set.measures().get(set.measureIndex(r.numerator())).isCount()
                && set.measures().get(set.measureIndex(r.denominator())).isCount();
    }

    /** A plural for headings: "Campaigns", "Countries". */
    public static String plural(String word) {
        if (word.endsWith("y") && word.length() > 1 && "aeiou".indexOf(word.charAt(word.length() - 2)) < 0)
            return word.substring(0, word.length() - 1) + "ies";
        if (word.endsWith("s") || word.endsWith("x") || word.endsWith("ch") || word.endsWith("sh")) return word + "es";
        return word + "s";
    }

    /** A singular for "clicks per impression": a plural's trailing {@code s} dropped. */
    public static String singular(String word) {
        return word.endsWith("s") && !word.endsWith("ss") ? word.substring(0, word.length() - 1) : word;
    }

    static String capitalize(String s) {
        return s.isEmpty() ? s : s.substring(0, 1).toUpperCase(Locale.ROOT) + s.substring(1);
    }
}
