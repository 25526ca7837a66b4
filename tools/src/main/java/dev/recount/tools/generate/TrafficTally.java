package dev.recount.tools.generate;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.recount.core.event.InvalidReason;
import dev.recount.oracle.SetTruth;
import dev.recount.oracle.Truth;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * What the generator meant to send, counted as it drew it: valid events of the main range and of the tail, duplicate
 * sends, events delayed to be too late, invalid records by intended reason, and which partition went quiet when. Not
 * the ground truth: that is the oracle's ({@code dev.recount.oracle}), computed from the records as sent.
 */
public final class TrafficTally {
    private final Map<InvalidReason, Long> invalid = new EnumMap<>(InvalidReason.class);
    private TrafficProfile profile;
    private int quietPartition = -1;
    private long quietFromTs;
    private long quietToTs;
    private long validMain;
    private long validTail;
    private long duplicates;
    private long tooLateIntended;

    void describe(TrafficProfile profile, int quietPartition, long quietFromTs, long quietToTs) {
        this.profile = profile;
        this.quietPartition = quietPartition;
        this.quietFromTs = quietFromTs;
        this.quietToTs = quietToTs;
    }

    void addValid(boolean inMain, boolean tooLate) {
        if (inMain) validMain++;
        else validTail++;
        if (tooLate) tooLateIntended++;
    }

    void addDuplicate() {
        duplicates++;
    }

    void addInvalid(InvalidReason reason) {
        invalid.merge(reason, 1L, Long::sum);
    }

    public long validMain() {
        return validMain;
    }

    public long validTail() {
        return validTail;
    }

    public long duplicates() {
        return duplicates;
    }

    public long tooLateIntended() {
        return tooLateIntended;
    }

    public Map<InvalidReason, Long> invalidByReason() {
        return Map.copyOf(invalid);
    }

    public long invalidTotal() {
        return invalid.values().stream().mapToLong(Long::longValue).sum();
    }

    /** Every record drawn: valid events, duplicate sends and invalid records. */
    public long records() {
        return validMain + validTail + duplicates + invalidTotal();
    }

    /** The partition that went quiet; -1 when none did. */
    public int quietPartition() {
        return quietPartition;
    }

    /**
     * Writes {@code summary.json} into {@code dir}: this tally, and per metric set of {@code truth} its window, its
     * number of keys and its totals (each set's rows are in {@code <set>.csv}, which {@link Truth#write} writes).
     */
    public void writeSummary(Path dir, Truth truth) throws IOException {
        ObjectMapper json = new ObjectMapper();
        ObjectNode n = json.createObjectNode();
        n.put("seed", profile.seed());
        n.put("main_from", profile.start().toString());
        n.put("main_to", profile.mainEnd().toString());
        n.put("tail_to", profile.tailEnd().toString());
        n.put("valid_main", validMain);
        n.put("valid_tail", validTail);
        n.put("duplicates_sent", duplicates);
        n.put("too_late_intended", tooLateIntended);
        n.put("invalid_total", invalidTotal());
        ObjectNode reasons = n.putObject("invalid_by_reason");
        for (InvalidReason r : InvalidReason.values()) reasons.put(r.wireName(), invalid.getOrDefault(r, 0L));
        n.put("quiet_partition", quietPartition);
        n.put("quiet_from", Instant.ofEpochMilli(quietFromTs).toString());
        n.put("quiet_to", Instant.ofEpochMilli(quietToTs).toString());
        ObjectNode sets = n.putObject("sets");
        for (SetTruth s : truth.sets()) {
            ObjectNode set = sets.putObject(s.name());
            set.put("window_ms", s.set().windowMillis());
            set.put("keys", s.rows().size());
            put(set.putObject("totals"), s.set().measureNames(), s.totals());
            if (s.attribution() != null) {
                put(set.putObject("attribution_totals"), SetTruth.ATTRIBUTION_COLUMNS, s.attributionTotals());
            }
        }
        Files.createDirectories(dir);
        json.writerWithDefaultPrettyPrinter()
                .writeValue(dir.resolve("summary.json").toFile(), n);
    }

    private static void put(ObjectNode into, List<String> names, List<BigInteger> values) {
        for (int i = 0; i < names.size(); i++) into.put(names.get(i), values.get(i));
    }
}
