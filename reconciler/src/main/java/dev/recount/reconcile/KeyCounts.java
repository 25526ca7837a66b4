package dev.recount.reconcile;

/** How the keys of a group (a window, a campaign-day, the range) compared. */
public record KeyCounts(
        long compared, long matched, long mismatched, long missingInStream, long missingInBatch, long beyondTolerance) {
    public KeyCounts {
        if (compared != matched + mismatched + missingInStream + missingInBatch) {
            throw new IllegalArgumentException("compared " + compared + " != matched + mismatched + missing (" + matched
                    + " + " + mismatched + " + " + missingInStream + " + " + missingInBatch + ")");
        }
        if (beyondTolerance > compared - matched) {
            throw new IllegalArgumentException("beyondTolerance " + beyondTolerance + " exceeds the differing keys");
        }
    }

    public static final KeyCounts NONE = new KeyCounts(0, 0, 0, 0, 0, 0);

    /** Keys whose stream and batch values are not identical. */
    public long differing() {
        return compared - matched;
    }
}
