package dev.recount.db;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.sets.DerivedRatio;
import dev.recount.core.sets.MeasureValues;
import dev.recount.db.tables.ServingSettingsTable;
import dev.recount.db.tables.SetColumns;
import dev.recount.db.tables.Timestamps;
import dev.recount.testkit.DefaultSet;
import dev.recount.testkit.LocalStack;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.function.Function;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The read side of migration V12 on a real PostgreSQL, read as the finance login: the ratios next to the sums in
 * window_metrics, hourly and daily rollups (DST days included), their is_final rule, and the sliding sums, each
 * checked against a brute-force computation in Java over the rows window_metrics serves.
 *
 * <p>Tests module db, but lives in deploy (like SchemaITCase): it needs the local stack.
 */
class ServingRollupsITCase {
    private static final SetColumns COLUMNS = new SetColumns(DefaultSet.TABLES);

    static final Instant T0 = Instant.parse("2026-11-02T00:00:00Z");
    static final long MINUTE = 60_000;
    static final BigInteger SPEND_MAX = BigInteger.TEN.pow(38).subtract(BigInteger.ONE);
    static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");

    static LocalStack stack;
    String schema;

    @BeforeAll
    static void startStack() {
        stack = LocalStack.shared();
    }

    @BeforeEach
    void freshSchema() {
        schema = stack.createMigratedSchema("rollups");
    }

    /** One window row as a source table holds it. */
    record Window(Instant start, String campaign, String channel, MeasureValues m) {}

    // ---- ratios ------------------------------------------------------------------------------------------------

    @Test
    void ratiosAreExactAndNullWhereTheDenominatorIsZero() throws SQLException {
        List<Window> rows = List.of(
                w(0, "plain", 3, 1, 1, BigInteger.valueOf(2_500_000), 5),
                w(0, "thirds", 3, 2, 0, BigInteger.valueOf(1_000_000), 5),
                w(0, "no-impressions", 0, 4, 1, BigInteger.valueOf(7), 5),
                w(0, "no-clicks", 9, 0, 0, BigInteger.valueOf(7), 9),
                w(0, "nothing", 0, 0, 0, BigInteger.ZERO, 1),
                w(0, "spend-max", 3, 7, 1, SPEND_MAX, 11),
                w(0, "spend-max-one", 1, 1, 1, SPEND_MAX, 3));
        insertStream(rows);

        Map<String, Map<String, BigDecimal>> served = new TreeMap<>();
        try (Connection c = stack.loginConnection(schema, Role.FINANCE);
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT * FROM window_metrics")) {
            while (rs.next()) served.put(rs.getString("campaign_id"), ratios(rs));
        }
        assertThat(served).hasSize(rows.size());
        for (Window w : rows) {
            for (DerivedRatio r : DefaultSet.SET.ratios()) {
                assertThat(served.get(w.campaign()).get(r.name()))
                        .as(w.campaign() + " " + r.name())
                        .isEqualTo(DefaultSet.SET.ratio(r, w.m()));
            }
        }
        assertThat(served.get("no-impressions").get("ctr")).isNull();
        assertThat(served.get("no-impressions").get("cpm_micros")).isNull();
        assertThat(served.get("no-clicks").get("cvr")).isNull();
        assertThat(served.get("no-clicks").get("cpc_micros")).isNull();
        assertThat(served.get("no-clicks").get("cost_per_conversion_micros")).isNull();
        assertThat(served.get("nothing").values()).containsOnlyNulls();
        // Exact digits, not a double: 2/3 rounds up in the 12th place; spend at its bound keeps all 38 digits.
        assertThat(served.get("thirds").get("ctr")).isEqualTo(new BigDecimal("0.666666666667"));
        assertThat(served.get("spend-max").get("cpc_micros").toPlainString())
                .isEqualTo("14285714285714285714285714285714285714.142857142857");
        assertThat(served.get("spend-max").get("cpm_micros").toPlainString())
                .isEqualTo("33333333333333333333333333333333333333000.000000000000");
        assertThat(served.get("spend-max-one").get("cpm_micros"))
                .isEqualTo(new BigDecimal(SPEND_MAX.multiply(BigInteger.valueOf(1000))).setScale(DerivedRatio.SCALE));
    }

    @Test
    void aRollupsRatioIsTheRatioOfItsSumsNotTheAverageOfRatios() throws SQLException {
        // CTRs 100 % and 0 %: their average is 50 %, the hour's CTR is 1 click in 100 impressions.
        insertStream(List.of(
                w(0, "c", 1, 1, 1, BigInteger.valueOf(3_000_000), 2),
                w(1, "c", 99, 0, 0, BigInteger.valueOf(1_000_000), 99)));
        // Spend at its bound in two windows of one hour: the sum exceeds numeric(38,0) and stays exact.
        insertStream(List.of(w(0, "max", 1, 1, 1, SPEND_MAX, 1), w(1, "max", 1, 1, 1, SPEND_MAX, 1)));

        List<Period> hours = periods("SELECT * FROM hourly_metrics(?, ?)", T0, T0.plus(Duration.ofHours(1)));
        Period c =
                hours.stream().filter(p -> p.campaign().equals("c")).findFirst().orElseThrow();
        assertThat(c.ratios().get("ctr")).isEqualTo(new BigDecimal("0.010000000000"));
        assertThat(c.ratios().get("cvr")).isEqualTo(new BigDecimal("1.000000000000"));
        assertThat(c.ratios().get("cpm_micros")).isEqualTo(new BigDecimal("40000000.000000000000"));
        assertThat(c.windows()).isEqualTo(2);
        Period max = hours.stream()
                .filter(p -> p.campaign().equals("max"))
                .findFirst()
                .orElseThrow();
        assertThat(max.sums().get(DefaultSet.SPEND)).isEqualTo(SPEND_MAX.multiply(BigInteger.TWO));
        assertThat(max.ratios().get("cpc_micros")).isEqualTo(new BigDecimal(SPEND_MAX).setScale(DerivedRatio.SCALE));
    }

    // ---- rollups -----------------------------------------------------------------------------------------------

    @Test
    void hourlyAndDailyTotalsAreTheSumsOfTheirMinutes() throws SQLException {
        // Two days of sparse minutes in three sources: finalized, stream only, batch only.
        SplittableRandom random = new SplittableRandom(7);
        List<Window> stream = new ArrayList<>(), batch = new ArrayList<>(), finalized = new ArrayList<>();
        for (int minute = 0; minute < 2 * 1440; minute += 1 + random.nextInt(9)) {
            for (String campaign : List.of("a", "b")) {
                if (random.nextInt(4) == 0) continue;
                Window w = w(
                        minute,
                        campaign,
                        random.nextInt(1000),
                        random.nextInt(50),
                        random.nextInt(5),
                        BigInteger.valueOf(random.nextLong(1, 1_000_000_000L)),
                        1 + random.nextInt(2000));
                switch (random.nextInt(3)) {
                    case 0 -> stream.add(w);
                    case 1 -> batch.add(w);
                    default -> finalized.add(w);
                }
            }
        }
        insertStream(stream);
        insertBatch(batch);
        insertFinalized(finalized);
        setTimeZone(ZoneId.of("UTC"));
        List<Window> served = served();
        assertThat(served).hasSize(stream.size() + batch.size() + finalized.size());

        assertThat(periods("SELECT * FROM hourly_metrics(?, ?)", T0, T0.plus(Duration.ofDays(2))))
                .containsExactlyElementsOf(bruteForce(
                        served, w -> w.start().truncatedTo(ChronoUnit.HOURS), s -> s.plus(Duration.ofHours(1))));
        assertThat(periods("SELECT * FROM daily_metrics(?, ?)", LocalDate.of(2026, 11, 2), LocalDate.of(2026, 11, 4)))
                .containsExactlyElementsOf(bruteForce(
                        served, w -> w.start().truncatedTo(ChronoUnit.DAYS), s -> s.plus(Duration.ofDays(1))));
        // Hours overlapping [10:30, 12:10) come whole: 10:00, 11:00 and 12:00.
        assertThat(periods(
                        "SELECT * FROM hourly_metrics(?, ?)",
                        T0.plus(Duration.ofMinutes(630)),
                        T0.plus(Duration.ofMinutes(730))))
                .extracting(Period::start)
                .containsOnly(
                        T0.plus(Duration.ofHours(10)), T0.plus(Duration.ofHours(11)), T0.plus(Duration.ofHours(12)));
        assertThat(periods(
                        "SELECT * FROM hourly_metrics(?, ?)",
                        T0.plus(Duration.ofHours(5)),
                        T0.plus(Duration.ofHours(5))))
                .isEmpty();
    }

    @Test
    void aDaylightSavingDayHas23Or25HoursInTheRecordedZone() throws SQLException {
        // A window every 10 minutes (two campaigns) over the spring and the autumn change of 2026 in Berlin.
        List<Window> rows = new ArrayList<>();
        for (Instant from : List.of(Instant.parse("2026-03-27T22:00:00Z"), Instant.parse("2026-10-23T22:00:00Z"))) {
            for (Instant t = from; t.isBefore(from.plus(Duration.ofDays(4))); t = t.plus(Duration.ofMinutes(10))) {
                rows.add(new Window(t, "c", "web", DefaultSet.values(10, 1, 0, 1_000, 11)));
                rows.add(new Window(t, "d", "app", DefaultSet.values(20, 3, 1, 7_000, 24)));
            }
        }
        insertStream(rows);
        setTimeZone(BERLIN);
        List<Window> served = served();

        Function<Window, Instant> berlinDay =
                w -> w.start().atZone(BERLIN).toLocalDate().atStartOfDay(BERLIN).toInstant();
        Function<Instant, Instant> nextBerlinDay = s ->
                s.atZone(BERLIN).toLocalDate().plusDays(1).atStartOfDay(BERLIN).toInstant();
        for (LocalDate first : List.of(LocalDate.of(2026, 3, 28), LocalDate.of(2026, 10, 24))) {
            List<Period> days = periods("SELECT * FROM daily_metrics(?, ?)", first, first.plusDays(3));
            Instant lo = first.atStartOfDay(BERLIN).toInstant(),
                    hi = first.plusDays(3).atStartOfDay(BERLIN).toInstant();
            assertThat(days)
                    .containsExactlyElementsOf(bruteForce(
                            served.stream()
                                    .filter(w ->
                                            !w.start().isBefore(lo) && w.start().isBefore(hi))
                                    .toList(),
                            berlinDay,
                            nextBerlinDay));
        }
        Period spring = periods(
                        "SELECT * FROM daily_metrics(?, ?)", LocalDate.of(2026, 3, 29), LocalDate.of(2026, 3, 30))
                .get(0);
        assertThat(spring.start()).isEqualTo(Instant.parse("2026-03-28T23:00:00Z"));
        assertThat(spring.end()).isEqualTo(Instant.parse("2026-03-29T22:00:00Z"));
        assertThat(spring.windows()).isEqualTo(23 * 6);
        Period autumn = periods(
                        "SELECT * FROM daily_metrics(?, ?)", LocalDate.of(2026, 10, 25), LocalDate.of(2026, 10, 26))
                .get(0);
        assertThat(autumn.start()).isEqualTo(Instant.parse("2026-10-24T22:00:00Z"));
        assertThat(autumn.end()).isEqualTo(Instant.parse("2026-10-25T23:00:00Z"));
        assertThat(autumn.windows()).isEqualTo(25 * 6);

        // The repeated hour (02:00 CEST, then 02:00 CET) is two hours of 60 minutes each.
        List<Period> night = periods(
                "SELECT * FROM hourly_metrics(?, ?) WHERE campaign_id = 'c'",
                Instant.parse("2026-10-24T23:00:00Z"),
                Instant.parse("2026-10-25T03:00:00Z"));
        assertThat(night)
                .extracting(Period::start)
                .containsExactly(
                        Instant.parse("2026-10-24T23:00:00Z"),
                        Instant.parse("2026-10-25T00:00:00Z"),
                        Instant.parse("2026-10-25T01:00:00Z"),
                        Instant.parse("2026-10-25T02:00:00Z"));
        assertThat(night).allSatisfy(p -> {
            assertThat(Duration.between(p.start(), p.end())).isEqualTo(Duration.ofHours(1));
            assertThat(p.windows()).isEqualTo(6);
        });
    }

    @Test
    void hoursOfAHalfHourZoneStartOnTheHalfHour() throws SQLException {
        insertStream(List.of(w(20, "c", 1, 1, 0, BigInteger.ONE, 1), w(40, "c", 1, 0, 0, BigInteger.ONE, 1)));
        for (ZoneId zone : List.of(ZoneId.of("Asia/Kolkata"), ZoneId.of("+05:30"), ZoneId.of("GMT+05:30"))) {
            setTimeZone(zone);
            List<Period> hours = periods("SELECT * FROM hourly_metrics(?, ?)", T0, T0.plus(Duration.ofHours(1)));
            assertThat(hours)
                    .as(zone.getId())
                    .extracting(Period::start)
                    .containsExactly(T0.minus(Duration.ofMinutes(30)), T0.plus(Duration.ofMinutes(30)));
        }
        // PostgreSQL reads a bare "+05:30" as west of Greenwich (POSIX): a fixed offset is recorded as a POSIX zone.
        try (Connection c = admin()) {
            assertThat(ServingSettingsTable.timeZone(c)).isEqualTo("<+0530>-05:30:00");
        }
        assertThat(ServingSettingsTable.postgresName(ZoneId.of("Z"))).isEqualTo("UTC");
        assertThat(ServingSettingsTable.postgresName(ZoneId.of("-03:00"))).isEqualTo("<-0300>+03:00:00");
        assertThat(ServingSettingsTable.postgresName(BERLIN)).isEqualTo("Europe/Berlin");
    }

    @Test
    void aPeriodIsFinalOnlyWhenEveryMinuteIsFinalAndReconciliationCoveredIt() throws SQLException {
        Instant h = T0;
        // Hour 0: all rows finalized, covered by a run.           -> final
        // Hour 1: all finalized but one stream row, covered.      -> not final
        // Hour 2: all rows finalized, not covered by any run.     -> not final (minutes without rows may still come)
        // Hour 3: all finalized, covered only by a dry run.       -> not final
        // Hours 4 and 5: covered by two runs, [4:00, 5:30) and [5:30, 6:00): their union counts. -> final
        insertFinalized(List.of(
                w(0, "c", 5, 1, 0, BigInteger.TEN, 6),
                w(59, "c", 5, 1, 0, BigInteger.TEN, 6),
                w(60, "c", 5, 1, 0, BigInteger.TEN, 6),
                w(120, "c", 5, 1, 0, BigInteger.TEN, 6),
                w(180, "c", 5, 1, 0, BigInteger.TEN, 6),
                w(240, "c", 5, 1, 0, BigInteger.TEN, 6),
                w(340, "c", 5, 1, 0, BigInteger.TEN, 6)));
        insertStream(List.of(w(61, "c", 5, 1, 0, BigInteger.TEN, 6)));
        recordRun(h, h.plus(Duration.ofHours(2)), "succeeded", false);
        recordRun(h.plus(Duration.ofHours(3)), h.plus(Duration.ofHours(4)), "succeeded", true);
        recordRun(h.plus(Duration.ofMinutes(240)), h.plus(Duration.ofMinutes(330)), "succeeded", false);
        recordRun(h.plus(Duration.ofMinutes(330)), h.plus(Duration.ofMinutes(360)), "succeeded", false);
        recordRun(h.plus(Duration.ofHours(2)), h.plus(Duration.ofHours(3)), "failed", false);
        setTimeZone(ZoneId.of("UTC"));

        Map<Instant, Boolean> finalByHour = new TreeMap<>();
        for (Period p : periods("SELECT * FROM hourly_metrics(?, ?)", h, h.plus(Duration.ofHours(6)))) {
            finalByHour.put(p.start(), p.isFinal());
        }
        assertThat(finalByHour)
                .containsExactly(
                        Map.entry(h, true),
                        Map.entry(h.plus(Duration.ofHours(1)), false),
                        Map.entry(h.plus(Duration.ofHours(2)), false),
                        Map.entry(h.plus(Duration.ofHours(3)), false),
                        Map.entry(h.plus(Duration.ofHours(4)), true),
                        Map.entry(h.plus(Duration.ofHours(5)), true));
        // The day: not every minute is final, nor is it covered.
        assertThat(periods("SELECT * FROM daily_metrics(?, ?)", LocalDate.of(2026, 11, 2), LocalDate.of(2026, 11, 3)))
                .extracting(Period::isFinal)
                .containsExactly(false);
        // Sliding sums: final where their N minutes are covered and every row in them is final.
        Map<Instant, Boolean> sliding = new TreeMap<>();
        try (Connection c = stack.loginConnection(schema, Role.FINANCE);
                PreparedStatement ps =
                        c.prepareStatement("SELECT window_end, is_final FROM sliding_metrics(5, ?, ?)")) {
            Timestamps.bind(ps, 1, h.toEpochMilli());
            Timestamps.bind(ps, 2, h.plus(Duration.ofMinutes(70)).toEpochMilli());
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next())
                    sliding.put(Instant.ofEpochMilli(Timestamps.read(rs, "window_end")), rs.getBoolean("is_final"));
            }
        }
        assertThat(sliding.get(h.plus(Duration.ofMinutes(1))))
                .as("end 00:01: [23:56, 00:01) is not all covered")
                .isFalse();
        assertThat(sliding.get(h.plus(Duration.ofMinutes(5))))
                .as("end 00:05, covered")
                .isTrue();
        assertThat(sliding.get(h.plus(Duration.ofMinutes(62))))
                .as("end 01:02, a stream row in it")
                .isFalse();
        assertThat(sliding.get(h.plus(Duration.ofMinutes(60))))
                .as("end 01:00, covered, all final")
                .isTrue();
    }

    // ---- sliding -----------------------------------------------------------------------------------------------

    @Test
    void slidingSumsEqualABruteForceSumOfTheLastNMinutes() throws SQLException {
        SplittableRandom random = new SplittableRandom(11);
        List<Window> stream = new ArrayList<>(), finalized = new ArrayList<>();
        for (int minute = 0; minute < 180; minute++) {
            for (String campaign : List.of("a", "b", "c")) {
                if (random.nextInt(3) == 0) continue;
                Window w = w(
                        minute,
                        campaign,
                        random.nextInt(100),
                        random.nextInt(10),
                        random.nextInt(3),
                        BigInteger.valueOf(random.nextLong(0, 100_000_000L)),
                        1 + random.nextInt(200));
                (random.nextBoolean() ? stream : finalized).add(w);
            }
        }
        insertStream(stream);
        insertFinalized(finalized);
        List<Window> served = served();

        for (int n : new int[] {5, 17}) {
            Instant from = T0.plus(Duration.ofMinutes(30)), to = T0.plus(Duration.ofMinutes(150));
            List<Period> expected = new ArrayList<>();
            for (Instant end = from.plus(Duration.ofMinutes(1));
                    !end.isAfter(to);
                    end = end.plus(Duration.ofMinutes(1))) {
                Instant lo = end.minus(Duration.ofMinutes(n)), e = end;
                expected.addAll(bruteForce(
                        served.stream()
                                .filter(w ->
                                        !w.start().isBefore(lo) && w.start().isBefore(e))
                                .toList(),
                        w -> e,
                        s -> s));
            }
            List<Period> actual = periods(
                    "SELECT window_end AS period_start, window_end AS period_end, * FROM sliding_metrics(" + n
                            + ", ?, ?)",
                    from,
                    to);
            assertThat(actual).as("N = " + n).containsExactlyInAnyOrderElementsOf(expected);
            assertThat(actual).as("N = " + n).hasSizeGreaterThan(300);
        }
    }

    // ---- helpers -----------------------------------------------------------------------------------------------

    /** One rollup (or sliding) row as served; for sliding rows start and end are both the sliding window's end. */
    record Period(
            Instant start,
            Instant end,
            String campaign,
            String channel,
            MeasureValues sums,
            Map<String, BigDecimal> ratios,
            long windows,
            boolean isFinal) {}

    static Window w(
            int minute,
            String campaign,
            long impressions,
            long clicks,
            long conversions,
            BigInteger spend,
            long events) {
        return new Window(
                T0.plus(Duration.ofMinutes(minute)),
                campaign,
                "web",
                DefaultSet.values(impressions, clicks, conversions, spend, events));
    }

    /**
     * The expected rows: the served windows grouped by period ({@code periodOf}) and key, the sums added up in
     * Java, the ratios by core's {@link DerivedRatio}, final when every row is (no reconciliation run in these tests).
     */
    static List<Period> bruteForce(
            List<Window> served, Function<Window, Instant> periodOf, Function<Instant, Instant> endOf) {
        Map<String, Period> byKey = new TreeMap<>();
        for (Window w : served) {
            Instant start = periodOf.apply(w);
            String key = String.format("%020d|%s|%s", start.toEpochMilli(), w.campaign(), w.channel());
            Period p = byKey.get(key);
            MeasureValues sums = p == null ? w.m() : p.sums().plus(w.m());
            byKey.put(
                    key,
                    new Period(
                            start,
                            endOf.apply(start),
                            w.campaign(),
                            w.channel(),
                            sums,
                            ratiosOf(sums),
                            p == null ? 1 : p.windows() + 1,
                            false));
        }
        return new ArrayList<>(byKey.values());
    }

    static Map<String, BigDecimal> ratiosOf(MeasureValues m) {
        Map<String, BigDecimal> r = new TreeMap<>();
        for (DerivedRatio ratio : DefaultSet.SET.ratios()) r.put(ratio.name(), DefaultSet.SET.ratio(ratio, m));
        return r;
    }

    static Map<String, BigDecimal> ratios(ResultSet rs) throws SQLException {
        Map<String, BigDecimal> r = new TreeMap<>();
        for (DerivedRatio ratio : DefaultSet.SET.ratios()) r.put(ratio.name(), rs.getBigDecimal(ratio.name()));
        return r;
    }

    /** Rows of a rollup query with two bound parameters, as the finance login reads them, in period and key order. */
    List<Period> periods(String sql, Object from, Object to) throws SQLException {
        List<Period> out = new ArrayList<>();
        try (Connection c = stack.loginConnection(schema, Role.FINANCE);
                PreparedStatement ps = c.prepareStatement(sql + " ORDER BY period_start, campaign_id, channel_id")) {
            for (int i = 0; i < 2; i++) {
                Object v = i == 0 ? from : to;
                if (v instanceof Instant t) Timestamps.bind(ps, i + 1, t.toEpochMilli());
                else ps.setObject(i + 1, v);
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new Period(
                            Instant.ofEpochMilli(Timestamps.read(rs, "period_start")),
                            Instant.ofEpochMilli(Timestamps.read(rs, "period_end")),
                            rs.getString("campaign_id"),
                            rs.getString("channel_id"),
                            COLUMNS.readValues(rs, ""),
                            ratios(rs),
                            rs.getLong("windows"),
                            rs.getBoolean("is_final")));
                }
            }
        }
        return out;
    }

    /** Everything window_metrics serves, as the finance login reads it. */
    List<Window> served() throws SQLException {
        List<Window> out = new ArrayList<>();
        try (Connection c = stack.loginConnection(schema, Role.FINANCE);
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT * FROM window_metrics")) {
            while (rs.next()) {
                out.add(new Window(
                        Instant.ofEpochMilli(Timestamps.read(rs, "window_start")),
                        rs.getString("campaign_id"),
                        rs.getString("channel_id"),
                        COLUMNS.readValues(rs, "")));
            }
        }
        return out;
    }

    void setTimeZone(ZoneId zone) throws SQLException {
        try (Connection c = stack.loginConnection(schema, Role.RECONCILER)) {
            ServingSettingsTable.recordTimeZone(c, zone, T0);
        }
    }

    Connection admin() throws SQLException {
        Connection c = stack.adminConnection();
        c.setSchema(schema);
        return c;
    }

    void insertStream(List<Window> rows) throws SQLException {
        insert(
                "INSERT INTO stream_window_metrics (window_start, window_end, campaign_id, channel_id, impressions, clicks,"
                        + " conversions, spend_micros, events, revision) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1)",
                rows);
    }

    void insertBatch(List<Window> rows) throws SQLException {
        try (Connection c = admin();
                Statement s = c.createStatement()) {
            s.execute("INSERT INTO batch_runs (run_id, mode, status) VALUES (1, 'range', 'succeeded')");
        }
        insert(
                "INSERT INTO batch_window_metrics (window_start, window_end, campaign_id, channel_id, impressions, clicks,"
                        + " conversions, spend_micros, events, run_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1)",
                rows);
    }

    /** As a reconciliation finalizes them (the run id is not checked: V11). */
    void insertFinalized(List<Window> rows) throws SQLException {
        insert(
                "INSERT INTO window_corrections (window_start, window_end, campaign_id, channel_id, impressions, clicks,"
                        + " conversions, spend_micros, events, reconciliation_run_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1)",
                rows);
    }

    void recordRun(Instant from, Instant to, String status, boolean dryRun) throws SQLException {
        try (Connection c = admin();
                PreparedStatement ps = c.prepareStatement(
                        "INSERT INTO reconciliation_runs (range_from, range_to, status, dry_run) VALUES (?, ?, ?, ?)")) {
            Timestamps.bind(ps, 1, from.toEpochMilli());
            Timestamps.bind(ps, 2, to.toEpochMilli());
            ps.setString(3, status);
            ps.setBoolean(4, dryRun);
            ps.executeUpdate();
        }
    }

    private void insert(String sql, List<Window> rows) throws SQLException {
        try (Connection c = admin();
                PreparedStatement ps = c.prepareStatement(sql)) {
            for (Window w : rows) {
                Timestamps.bind(ps, 1, w.start().toEpochMilli());
                Timestamps.bind(ps, 2, w.start().toEpochMilli() + MINUTE);
                ps.setString(3, w.campaign());
                ps.setString(4, w.channel());
                COLUMNS.bindValues(ps, 5, w.m());
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }
}
