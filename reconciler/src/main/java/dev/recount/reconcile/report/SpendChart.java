package dev.recount.reconcile.report;

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
 * Inline SVG line chart of stream vs batch spend per window, with a red tick under every window whose keys
 * differ. Long ranges are drawn in buckets of consecutive windows (at most {@link #MAX_POINTS} points), so the
 * report stays small; the caption says so. Pixel positions are doubles, values (and the labels drawn from them)
 * stay exact integers.
 */
final class SpendChart {
    static final int MAX_POINTS = 720;
    private static final int WIDTH = 960;
    private static final int HEIGHT = 320;
    private static final int LEFT = 96;
    private static final int RIGHT = 16;
    private static final int TOP = 16;
    private static final int BOTTOM = 56;

    private record Point(long startMillis, BigInteger stream, BigInteger batch, long differingKeys) {}

    private SpendChart() {}

    static String render(List<WindowTotal> windows, ZoneId zone) {
        if (windows.isEmpty()) {
            return "<p class=\"muted\">No windows in this range: neither the stream nor the batch has any key.</p>";
        }
        int perBucket = (windows.size() + MAX_POINTS - 1) / MAX_POINTS;
        List<Point> points = new ArrayList<>();
        for (int i = 0; i < windows.size(); i += perBucket) {
            BigInteger stream = BigInteger.ZERO, batch = BigInteger.ZERO;
            long differing = 0;
            for (int j = i; j < Math.min(windows.size(), i + perBucket); j++) {
                WindowTotal w = windows.get(j);
                stream = stream.add(w.totals().stream().spendMicros());
                batch = batch.add(w.totals().batch().spendMicros());
                differing += w.totals().counts().differing();
            }
            points.add(new Point(windows.get(i).windowStartMillis(), stream, batch, differing));
        }
        BigInteger max = BigInteger.ZERO;
        for (Point p : points) max = max.max(p.stream).max(p.batch);
        BigInteger step = niceStep(max);
        BigInteger top = step.max(max.add(step).subtract(BigInteger.ONE).divide(step).multiply(step));
        double plotW = WIDTH - LEFT - RIGHT;
        double plotH = HEIGHT - TOP - BOTTOM;

        StringBuilder svg = new StringBuilder();
        svg.append("<svg class=\"chart\" viewBox=\"0 0 ").append(WIDTH).append(' ')
                .append(HEIGHT).append("\" role=\"img\" aria-labelledby=\"chart-title\">");
        svg.append("<title id=\"chart-title\">Spend per window: stream (real-time) vs batch (recomputed)</title>");
        // Grid and y labels.
        for (BigInteger v = BigInteger.ZERO; v.compareTo(top) <= 0; v = v.add(step)) {
            double y = y(v, top, plotH);
            svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>",
                    LEFT, WIDTH - RIGHT, y, y));
            svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" class=\"ylabel\">%s</text>", LEFT - 8, y + 4,
                    Html.escape(Money.compact(v))));
        }
        // x labels: first, middle and last point.
        DateTimeFormatter fmt = DateTimeFormatter.ofPattern("MM-dd HH:mm").withZone(zone);
        int[] labelled = points.size() == 1 ? new int[] {0} : new int[] {0, (points.size() - 1) / 2, points.size() - 1};
        for (int idx : labelled) {
            String anchor = idx == 0 ? "start" : idx == points.size() - 1 ? "end" : "middle";
            svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"%s\" class=\"xlabel\">%s</text>",
                    x(idx, points.size(), plotW), HEIGHT - BOTTOM + 34, anchor,
                    Html.escape(fmt.format(Instant.ofEpochMilli(points.get(idx).startMillis)))));
        }
        // Windows with differences: a tick under the axis.
        for (int i = 0; i < points.size(); i++) {
            Point p = points.get(i);
            if (p.differingKeys == 0) continue;
            double x = x(i, points.size(), plotW);
            svg.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" class=\"difftick\">"
                            + "<title>%s: %d keys differ, spend stream %s vs batch %s</title></line>",
                    x, x, TOP + plotH + 3, TOP + plotH + 13,
                    Html.escape(fmt.format(Instant.ofEpochMilli(p.startMillis))), p.differingKeys,
                    Html.escape(Money.grouped(p.stream)), Html.escape(Money.grouped(p.batch))));
        }
        svg.append(polyline(points, true, top, plotW, plotH, "batch"));
        svg.append(polyline(points, false, top, plotW, plotH, "stream"));
        if (points.size() <= 60) {
            for (int i = 0; i < points.size(); i++) {
                Point p = points.get(i);
                svg.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" class=\"batch-dot\"/>",
                        x(i, points.size(), plotW), y(p.batch, top, plotH)));
                svg.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2\" class=\"stream-dot\"/>",
                        x(i, points.size(), plotW), y(p.stream, top, plotH)));
            }
        }
        svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" class=\"axis\"/>",
                LEFT, WIDTH - RIGHT, TOP + plotH, TOP + plotH));
        svg.append("</svg>");
        String caption = perBucket == 1
                ? windows.size() + " windows"
                : windows.size() + " windows, drawn in " + points.size() + " points of " + perBucket + " consecutive windows each";
        return svg + "<p class=\"caption\"><span class=\"key stream\"></span>Stream (real-time)"
                + " <span class=\"key batch\"></span>Batch (recomputed, final)"
                + " <span class=\"key diff\"></span>Window with differing keys &middot; " + Html.escape(caption)
                + "; times in " + Html.escape(zone.getId()) + "; spend in currency units.</p>";
    }

    private static String polyline(List<Point> points, boolean batch, BigInteger top, double plotW, double plotH, String cls) {
        StringBuilder sb = new StringBuilder("<polyline class=\"").append(cls).append("\" points=\"");
        for (int i = 0; i < points.size(); i++) {
            Point p = points.get(i);
            sb.append(String.format(Locale.ROOT, "%.1f,%.1f ", x(i, points.size(), plotW), y(batch ? p.batch : p.stream, top, plotH)));
        }
        return sb.append("\"/>").toString();
    }

    private static double x(int i, int n, double plotW) {
        return n == 1 ? LEFT + plotW / 2 : LEFT + plotW * i / (n - 1);
    }

    /** A pixel position: the fraction v / top in double precision is plenty for a drawing. */
    private static double y(BigInteger v, BigInteger top, double plotH) {
        return TOP + plotH - plotH * new BigDecimal(v).divide(new BigDecimal(top), MathContext.DECIMAL64).doubleValue();
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
