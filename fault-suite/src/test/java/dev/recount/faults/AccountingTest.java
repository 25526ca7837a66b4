package dev.recount.faults;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.recount.faults.Outputs.LakeRow;
import dev.recount.faults.Outputs.TopicRecord;
import dev.recount.oracle.Key;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import org.junit.jupiter.api.Test;

/**
 * The fault suite's judge fed every failure it must report, each made the way a faulty pipeline would make it, on
 * {@link AccountingFixture}'s small round. Several of them keep every count the same (as many rows, dead letters per
 * reason, events per key): only a comparison by identity — ids, coordinates, payloads, keys — finds them.
 */
class AccountingTest {
    private final AccountingFixture f = new AccountingFixture();

    @Test
    void theOutputsOfACorrectPipelineAreClean() {
        Accounting.Result r = f.judge().withServed(Accounting.served(f.sent, f.servedAsTruth()));

        assertThat(r.clean()).as(r.toString()).isTrue();
        assertThat(r.counts())
                .extracting(Accounting.SetCount::set)
                .containsExactly("default", "campaign_slot", "channel_country");
        // e1 and e2 make one key of the default set, e3 and e4 another.
        assertThat(r.counts().get(0).keys()).isEqualTo(2);
        assertThat(r.backfill().records()).isEqualTo(1);
        assertThat(r.deadLetters().records()).isEqualTo(2);
        assertThat(r.lake().rows()).isEqualTo(5);
        assertThat(r.served("channel_country").orElseThrow().attributionKeysWrong())
                .isZero();
        assertThat(r.served("default").orElseThrow().attributionKeysWrong())
                .as("the default set has no attribution in the suite")
                .isEqualTo(-1);
    }

    @Test
    void anEventLostByTheStreamIsLostInEverySetAtItsKey() {
        f.streamRows.clear();
        f.streamRows.putAll(f.streamCounting("e1", "e4")); // e2, the click, never counted

        Accounting.Result r = f.judge();

        assertThat(r.clean()).isFalse();
        for (Accounting.SetCount c : r.counts()) {
            assertThat(c.eventsLost()).as(c.set()).isEqualTo(1);
            assertThat(c.eventsDoubled()).as(c.set()).isZero();
            assertThat(c.keysDiffering()).as(c.set()).isEqualTo(1);
        }
        assertThat(r.counts().get(0).examples()).singleElement().asString().contains("2026-12-01T10:00:00Z cmp-1/web");
        assertThat(r.counts().get(2).examples()).singleElement().asString().contains("web/DE");
    }

    @Test
    void anEventCountedInAStreamRowAndOnTheBackfillTopicIsDoubled() {
        f.streamRows.clear();
        f.streamRows.putAll(f.streamCounting("e1", "e2", "e3", "e4"));

        Accounting.Result r = f.judge();

        for (Accounting.SetCount c : r.counts()) {
            assertThat(c.eventsDoubled()).as(c.set()).isEqualTo(1);
            assertThat(c.eventsLost()).as(c.set()).isZero();
        }
        assertThat(r.counts().get(1).examples())
                .first()
                .asString()
                .contains("campaign_slot 2026-12-01T10:00:00Z cmp-2/video-pre");
        // Where the doubled key's backfill record came from, and every lake copy of its id.
        assertThat(r.counts().get(1).examples())
                .last()
                .asString()
                .contains("backfill e3 read at faults-in/0/2, judged at watermark 2026-12-01T10:06:00Z, lake copies"
                        + " [faults-in/0/2 sent 2026-12-01T10:01:12Z]");
    }

    @Test
    void aKeyWithAsManyEventsButAnotherSumDiffers() {
        // The stream's spend of e1's key in the default set is one micro off: events add up, spend does not.
        SortedMap<Key, List<BigInteger>> rows = f.streamRows.get("default");
        Key key = rows.firstKey();
        List<BigInteger> values = new ArrayList<>(rows.get(key));
        values.set(3, values.get(3).add(BigInteger.ONE));
        rows.put(key, values);

        Accounting.SetCount c = f.judge().counts().get(0);

        assertThat(c.eventsLost()).isZero();
        assertThat(c.eventsDoubled()).isZero();
        assertThat(c.keysDiffering()).isEqualTo(1);
        assertThat(c.examples()).singleElement().asString().contains("spend_micros 1501");
    }

    @Test
    void aBackfillRecordWithAnotherPayloadThanTheRecordItWasReadFromIsWrong() {
        // The id and the coordinates are right; the cost is not what was sent. A judge that counts the truth's copy
        // of the id would find nothing.
        ObjectNode e3 = (ObjectNode) AccountingFixture.read(AccountingFixture.E3);
        e3.put("cost_micros", 2001);
        f.backfill.set(0, f.backfillRecord(e3.toString(), 2, AccountingFixture.T0 + 6 * 60_000));

        Accounting.Result r = f.judge();

        assertThat(r.backfill().wrongPayload()).isEqualTo(1);
        assertThat(r.backfill().examples()).singleElement().asString().contains("\"cost_micros\":2001");
        // It counts where its payload says: spend off by one micro in e3's key, every event once.
        assertThat(r.counts().get(0).keysDiffering()).isEqualTo(1);
        assertThat(r.counts().get(0).eventsLost()).isZero();
    }

    @Test
    void aBackfillRecordNamingCoordinatesThatHoldAnotherEventIsWrong() {
        f.backfill.set(0, f.backfillRecord(AccountingFixture.E3, 3, AccountingFixture.T0 + 6 * 60_000));

        Accounting.Backfill b = f.judge().backfill();

        assertThat(b.wrongPayload()).isEqualTo(1);
        assertThat(b.examples())
                .singleElement()
                .asString()
                .contains("read at faults-in/0/3, which holds event e4; sent at [faults-in/0/2]");
    }

    @Test
    void aBackfillRecordInAnotherWindowThanItsEventsIsWrong() {
        ObjectNode r =
                (ObjectNode) AccountingFixture.read(new String(f.backfill.get(0).value()));
        ObjectNode campaignSlot = (ObjectNode) r.get("sets").get(1);
        campaignSlot.put("window_start", AccountingFixture.T0 + 5 * 60_000);
        campaignSlot.put("window_end", AccountingFixture.T0 + 10 * 60_000);
        f.backfill.set(0, new TopicRecord(f.backfill.get(0).at(), AccountingFixture.bytes(r.toString())));

        Accounting.Backfill b = f.judge().backfill();

        assertThat(b.wrongWindow()).isEqualTo(1);
        assertThat(b.examples())
                .singleElement()
                .asString()
                .contains("names campaign_slot window [2026-12-01T10:05:00Z, 2026-12-01T10:10:00Z)")
                .contains("is in [2026-12-01T10:00:00Z, 2026-12-01T10:05:00Z)");
    }

    @Test
    void aBackfillRecordJudgedTooLateWhileItsWindowWasOpenIsWrong() {
        // At 10:03 the 5-minute window [10:00, 10:05) had not closed.
        f.backfill.set(0, f.backfillRecord(AccountingFixture.E3, 2, AccountingFixture.T0 + 3 * 60_000));

        Accounting.Backfill b = f.judge().backfill();

        assertThat(b.wrongWindow()).isEqualTo(1);
        assertThat(b.examples()).singleElement().asString().contains("judged too late for campaign_slot");
    }

    @Test
    void anEventTwiceOnTheBackfillTopicIsADuplicateForEverySetItNames() {
        f.backfill.add(f.backfillRecord(AccountingFixture.E3, 2, AccountingFixture.T0 + 7 * 60_000));

        Accounting.Result r = f.judge();

        assertThat(r.backfill().duplicates()).isEqualTo(3);
        assertThat(r.counts()).allMatch(Accounting.SetCount::clean, "the second copy is not counted again");
    }

    @Test
    void aBackfillRecordOfAnEventNeverSentIsUnknown() {
        String ghost = AccountingFixture.event("ghost", "click", 30_000, "cmp-1", "web", 5, "");
        f.backfill.add(f.backfillRecord(ghost, 2, AccountingFixture.T0 + 6 * 60_000));

        Accounting.Backfill b = f.judge().backfill();

        assertThat(b.unknown()).isEqualTo(1);
        assertThat(b.examples()).singleElement().asString().contains("event ghost, never sent as a valid event");
    }

    @Test
    void lakeRowsSwappedForEachOtherAreWrongThoughEveryCountHolds() {
        // Same rows, same coordinates, same ids in the lake: but the payloads of 0 and 3 traded places.
        LakeRow first = f.lake.get(0);
        LakeRow fourth = f.lake.get(3);
        f.lake.set(0, withCoordinates(fourth, first.at()));
        f.lake.set(3, withCoordinates(first, fourth.at()));

        Accounting.Lake l = f.judge().lake();

        assertThat(l.rows()).isEqualTo(5);
        assertThat(l.missing()).isZero();
        assertThat(l.duplicated()).isZero();
        assertThat(l.wrong()).isEqualTo(2);
        assertThat(l.examples().get(0)).contains("lake row at faults-in/0/0: event_id e4 instead of e1");
    }

    @Test
    void aLakeRowWithoutTheFieldsSentBeyondTheContractIsWrong() {
        LakeRow e4 = f.lake.get(3);
        f.lake.set(
                3,
                new LakeRow(
                        e4.at(),
                        e4.eventId(),
                        e4.eventType(),
                        e4.eventTs(),
                        e4.campaignId(),
                        e4.channelId(),
                        e4.costMicros(),
                        e4.recordTs(),
                        e4.requestId(),
                        "{\"slot_id\":\"home-side\",\"country\":\"US\",\"device\":\"tablet\"}"));

        Accounting.Lake l = f.judge().lake();

        assertThat(l.wrong()).isEqualTo(1);
        assertThat(l.examples())
                .singleElement()
                .asString()
                .contains("attributes")
                .contains("\"sdk\"");
    }

    @Test
    void aLakeMissingTheSecondCopyOfAnEventAndHoldingAnotherTwiceIsReportedByCoordinates() {
        f.lake.set(4, f.lake.get(3)); // as many rows; the copy at 4 gone, 3 twice

        Accounting.Lake l = f.judge().lake();

        assertThat(l.missing()).isEqualTo(1);
        assertThat(l.duplicated()).isEqualTo(1);
        assertThat(l.examples()).anyMatch(e -> e.contains("the lake lacks faults-in/0/4 (event e1)"));
    }

    @Test
    void aLakeRowOfAnInvalidRecordIsExtra() {
        f.lake.add(new LakeRow(
                AccountingFixture.at(6), "e6", "click", AccountingFixture.T0, "cmp-1", "web", 0, 0, null, null));

        Accounting.Lake l = f.judge().lake();

        assertThat(l.extra()).isEqualTo(1);
        assertThat(l.examples()).singleElement().asString().contains("an invalid record was sent there");
    }

    @Test
    void deadLettersWithTheirReasonsSwappedAreWrongThoughTheCountsPerReasonHold() {
        f.deadLetters.clear();
        f.deadLetters.add(f.deadLetter("schema", 5));
        f.deadLetters.add(f.deadLetter("malformed", 6));

        Accounting.DeadLetters d = f.judge().deadLetters();

        assertThat(d.wrongReason()).isEqualTo(2);
        assertThat(d.lost()).isZero();
        assertThat(d.extra()).isZero();
        assertThat(d.examples()).contains("dead letter of faults-in/0/5 says schema, the record is malformed");
    }

    @Test
    void aDeadLetterOfAValidRecordInPlaceOfAnInvalidOneIsExtraAndTheOtherLost() {
        f.deadLetters.set(1, f.deadLetter("schema", 0)); // still one malformed and one schema dead letter

        Accounting.DeadLetters d = f.judge().deadLetters();

        assertThat(d.extra()).isEqualTo(1);
        assertThat(d.lost()).isEqualTo(1);
        assertThat(d.examples())
                .anyMatch(e -> e.contains("of faults-in/0/0, a valid record"))
                .anyMatch(e -> e.contains("no dead letter of faults-in/0/6 (schema)"));
    }

    @Test
    void aSecondDeadLetterOfOneRecordIsExtra() {
        f.deadLetters.add(f.deadLetter("malformed", 5));

        assertThat(f.judge().deadLetters().extra()).isEqualTo(1);
    }

    @Test
    void aServedKeyOffTheTruthAndAMissingAttributionRowAreWrong() {
        Outputs.Served served = f.servedAsTruth();
        SortedMap<Key, List<BigInteger>> slot = served.windows().get("campaign_slot");
        Key key = slot.firstKey();
        List<BigInteger> values = new ArrayList<>(slot.get(key));
        values.set(0, values.get(0).add(BigInteger.ONE));
        slot.put(key, values);
        SortedMap<Key, List<BigInteger>> attribution = served.attribution().get("channel_country");
        attribution.remove(attribution.firstKey());

        List<Accounting.SetServed> s = Accounting.served(f.sent, served);

        assertThat(s).extracting(Accounting.SetServed::keysWrong).containsExactly(0L, 1L, 0L);
        assertThat(s.get(2).attributionKeysWrong()).isEqualTo(1);
        assertThat(s.get(2).examples())
                .singleElement()
                .asString()
                .contains("attribution_metrics")
                .contains("missing");
    }

    @Test
    void anAddedSetIsAccountedFromItsFirstStreamWindowOnly() {
        // The stream counted channel_country from 10:01 only: e1 and e2 (10:00) are the batch layer's.
        SortedMap<Key, List<BigInteger>> rows = f.streamRows.get("channel_country");
        rows.keySet().removeIf(k -> k.windowStart() < AccountingFixture.T0 + 60_000);

        assertThat(f.judge().counts().get(2).clean())
                .as("counted from its first window")
                .isFalse();
        Accounting.Result r =
                Accounting.afterDrain(f.sent, f.afterDrain(), Map.of("channel_country", AccountingFixture.T0 + 60_000));
        assertThat(r.counts().get(2).clean()).as(r.toString()).isTrue();
        assertThat(r.counts().get(2).keys()).isEqualTo(2);
    }

    @Test
    void whatTheStreamMustNeverLogAndALedgerOffItsFilesAreProblems() {
        f.streamLogs = "INFO all well\nWARN KafkaSink: possible data loss on partition 2\n";
        f.archivedByHour.put(AccountingFixture.T0, 4L);

        List<String> problems = f.judge().problems();

        assertThat(problems)
                .containsExactly(
                        "WARN KafkaSink: possible data loss on partition 2",
                        "lake_archived_rows: hour 2026-12-01T10:00:00Z recorded 4 rows, its files hold 5");
    }

    @Test
    void aRecordOfTheTrafficThatNeverReachedTheInputTopicIsAProblem() {
        List<byte[]> intended = new ArrayList<>();
        for (Sent.InputRecord r : f.input) intended.add(r.value());
        assertThat(Accounting.input(intended, f.input)).isEmpty();

        intended.add(AccountingFixture.bytes(AccountingFixture.event("e9", "click", 1, "cmp-1", "web", 1, "")));
        intended.remove(0);

        assertThat(Accounting.input(intended, f.input))
                .containsExactly(
                        "input topic: 1 record(s) of the traffic never reached it",
                        "input topic: 1 record(s) more than the traffic holds");
    }

    @Test
    void aWatermarkAheadOfTheClockIsFound() {
        assertThat(Accounting.judgedAheadOf(AccountingFixture.T0 + 6 * 60_000, f.backfill))
                .isEmpty();
        assertThat(Accounting.judgedAheadOf(AccountingFixture.T0 + 5 * 60_000, f.backfill))
                .hasValueSatisfying(s -> assertThat(s).contains("event e3 judged too late at watermark"));
    }

    private static LakeRow withCoordinates(LakeRow r, Coordinates at) {
        return new LakeRow(
                at,
                r.eventId(),
                r.eventType(),
                r.eventTs(),
                r.campaignId(),
                r.channelId(),
                r.costMicros(),
                r.recordTs(),
                r.requestId(),
                r.attributes());
    }
}
