package dev.recount.reconcile.report;

import dev.recount.core.sets.Measure;
import dev.recount.core.sets.MetricSet;
import dev.recount.reconcile.Comparison.WindowTotal;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Inline SVG line chart of stream vs batch per window of one measure of a metric set (its report's lead measure: the
 * default set's spend), with a red tick under every window whose keys differ. Long ranges are drawn in buckets of
 * consecutive windows (at most {@link #MAX_POINTS} points), so the report stays small; the caption says so. Pixel
 * positions are doubles, values (and the labels drawn from them) stay exact integers. The drawing is the template
 * {@code window-chart.mustache}; this class computes what it shows.
 */
final class WindowChart {
    static final int MAX_POINTS = 720;
    private static final int WIDTH = 960;
    private static final int HEIGHT = 320;
    private static final int LEFT = 96;
    private static final int RIGHT = 16;
    private static final int TOP = 16;
    private static final int BOTTOM = 56;

    private record Point(long startMillis, BigInteger stream, BigInteger batch, long differingKeys) {}

    /**
     * What the template draws; {@code points} is false for an empty range. {@code word} names the measure in the
     * ticks' titles ("spend"), {@code title} the chart ("Spend per window"), {@code units} how its values are shown
     * (empty, or "; spend in currency units").
     */
    public record View(
            String idPrefix,
            String title,
            String word,
            String units,
            boolean points,
            int width,
            int height,
            List<GridLine> grid,
            List<XLabel> xLabels,
            List<Tick> ticks,
            String batchLine,
            String streamLine,
            List<Dot> dots,
            int axisX1,
            int axisX2,
            String axisY,
            String caption,
            String zone) {}

    public record GridLine(int x1, int x2, String y, int labelX, String labelY, String label) {}

    public record XLabel(String x, int y, String anchor, String label) {}

    public record Tick(String x, String y1, String y2, String when, long keys, String stream, String batch) {}

    public record Dot(String x, String batchY, String streamY) {}

    private WindowChart() {}

    /** The chart of measure {@code m} of {@code set}; {@code idPrefix} keeps its element ids apart from other sets'. */
    static String render(MetricSet set, int m, List<WindowTotal> windows, ZoneId zone, String idPrefix) {
        return Templates.render(Templates.WINDOW_CHART, view(set, m, windows, zone, idPrefix));
    }

    static View view(MetricSet set, int m, List<WindowTotal> windows, ZoneId zone, String idPrefix) {
        Measure measure = set.measures().get(m);
        boolean money = Labels.isMoney(measure);
        String word = Labels.label(measure).toLowerCase(Locale.ROOT);
        String title = Labels.label(measure);
        String units = money ? "; " + word + " in currency units" : "";
        if (windows.isEmpty()) {
            return new View(
                    idPrefix,
                    title,
                    word,
                    units,
                    false,
                    WIDTH,
                    HEIGHT,
                    List.of(),
                    List.of(),
                    List.of(),
                    "",
                    "",
                    List.of(),
                    0,
                    0,
                    "",
                    "",
                    zone.getId());
        }
        int perBucket = (windows.size() + MAX_POINTS - 1) / MAX_POINTS;
        List<Point> points = new ArrayList<>();
        for (int i = 0; i < windows.size(); i += perBucket) {
            BigInteger stream = BigInteger.ZERO, batch = BigInteger.ZERO;
            long differing = 0;
            for (int j = i; j < Math.min(windows.size(), i + perBucket); j++) {
                WindowTotal w = windows.get(j);
                stream = stream.add(w.totals().stream().get(m));
                batch = batch.add(w.totals().batch().get(m));
                differing += w.totals().counts().differing();
            }
            points.add(new Point(windows.get(i).windowStartMillis(), stream, batch, differing));
        }
        BigInteger max = BigInteger.ZERO;
        for (Point p : points) max = max.max(p.stream).max(p.batch);
        BigInteger step = niceStep(max);
        BigInteger top =
                step.max(max.add(step).subtract(BigInteger.ONE).divide(step).multiply(step));
        double plotW = WIDTH - LEFT - RIGHT;
        double plotH = HEIGHT - TOP - BOTTOM;
        int n = points.size();

        List<GridLine> grid = new ArrayList<>();
        for (BigInteger v = BigInteger.ZERO; v.compareTo(top) <= 0; v = v.add(step)) {
            double y = y(v, top, plotH);
            grid.add(new GridLine(
                    LEFT, WIDTH - RIGHT, px(y), LEFT - 8, px(y + 4), money ? Money.compact(v) : v.toString()));
        }
        // x labels: first, middle and last point.
        DateTimeFormatter fmt = DateTimeFormatter.ofPattern("MM-dd HH:mm").withZone(zone);
        List<XLabel> xLabels = new ArrayList<>();
        int[] labelled = n == 1 ? new int[] {0} : new int[] {0, (n - 1) / 2, n - 1};
        for (int idx : labelled) {
            String anchor = idx == 0 ? "start" : idx == n - 1 ? "end" : "middle";
            xLabels.add(new XLabel(
                    px(x(idx, n, plotW)),
                    HEIGHT - BOTTOM + 34,
                    anchor,
                    fmt.format(Instant.ofEpochMilli(points.get(idx).startMillis))));
        }
        List<Tick> ticks = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Point p = points.get(i);
            if (p.differingKeys == 0) continue;
            ticks.add(new Tick(
                    px(x(i, n, plotW)),
                    px(TOP + plotH + 3),
                    px(TOP + plotH + 13),
                    fmt.format(Instant.ofEpochMilli(p.startMillis)),
                    p.differingKeys,
                    Format.value(measure, p.stream),
                    Format.value(measure, p.batch)));
        }
        List<Dot> dots = new ArrayList<>();
        if (n <= 60) {
            for (int i = 0; i < n; i++) {
                Point p = points.get(i);
                dots.add(new Dot(px(x(i, n, plotW)), px(y(p.batch, top, plotH)), px(y(p.stream, top, plotH))));
            }
        }
        String caption = perBucket == 1
                ? windows.size() + " windows"
                : windows.size() + " windows, drawn in " + n + " points of " + perBucket + " consecutive windows each";
        return new View(
                idPrefix,
                title,
                word,
                units,
                true,
                WIDTH,
                HEIGHT,
                grid,
                xLabels,
                ticks,
                polyline(points, true, top, plotW, plotH),
                polyline(points, false, top, plotW, plotH),
                dots,
                LEFT,
                WIDTH - RIGHT,
                px(TOP + plotH),
                caption,
                zone.getId());
    }

    private static String polyline(List<Point> points, boolean batch, BigInteger top, double plotW, double plotH) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < points.size(); i++) {
            Point p = points.get(i);
            sb.append(px(x(i, points.size(), plotW)))
                    .append(',')
                    .append(px(y(batch ? p.batch : p.stream, top, plotH)))
                    .append(' ');
        }
        return sb.toString();
    }

    /** A pixel position with one decimal, in the root locale (a comma would break the SVG). */
    private static String px(double v) {
        return String.format(Locale.ROOT, "%.1f", v);
    }

    private static double x(int i, int n, double plotW) {
        return n == 1 ? LEFT + plotW / 2 : LEFT + plotW * i / (n - 1);
    }

    /** A pixel position: the fraction v / top in double precision is plenty for a drawing. */
    private static double y(BigInteger v, BigInteger top, double plotH) {
        return TOP
                + plotH
                - plotH
                        * new BigDecimal(v)
                                .divide(new BigDecimal(top), MathContext.DECIMAL64)
                                .doubleValue();
    }

    /** A 1-2-5 step giving about four grid lines up to {@code max} micros (at least 1 micro-unit). */
    static BigInteger niceStep(BigInteger max) {
        BigInteger raw = BigInteger.ONE.max(max.divide(BigInteger.valueOf(4)));
        BigInteger magnitude = BigInteger.ONE;
        while (magnitude.compareTo(raw.divide(BigInteger.TEN)) <= 0) magnitude = magnitude.multiply(BigInteger.TEN);
        for (long f : new long[] {1, 2, 5, 10}) {
            BigInteger candidate = magnitude.multiply(BigInteger.valueOf(f));
            if (candidate.compareTo(raw) >= 0) return candidate;
        }
        return magnitude.multiply(BigInteger.TEN);
    }
}
