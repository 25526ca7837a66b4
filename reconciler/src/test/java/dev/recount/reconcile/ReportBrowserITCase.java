package dev.recount.reconcile;

import static dev.recount.reconcile.testutils.ReconcileDb.key;
import static dev.recount.reconcile.testutils.ReconcileDb.m;
import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.cli.ExitCode;
import dev.recount.core.sets.MeasureValues;
import dev.recount.core.window.WindowKey;
import dev.recount.reconcile.testutils.HeadlessChromium;
import dev.recount.reconcile.testutils.ReconcileDb;
import java.awt.image.BufferedImage;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The HTML report as a finance analyst's browser shows it: a real reconcile run (through the command line),
 * then Debian's headless Chromium renders report.html. Campaign and channel ids carry script payloads that
 * would change document.title if the page ran them.
 */
class ReportBrowserITCase {
    static final Instant START = Instant.parse("2026-11-28T09:00:00Z");
    static final int WINDOWS = 40;
    static final String SCRIPT_CAMPAIGN = "<script>document.title='pwned'</script>";
    static final String IMG_CHANNEL = "<img src=x onerror=\"document.title='img'\">";
    static final WindowKey MISMATCHED = key(START.plusSeconds(60 * 17), "camp-north", "web");
    static final WindowKey HOSTILE = key(START.plusSeconds(60 * 25), SCRIPT_CAMPAIGN, IMG_CHANNEL);

    static ReconcileDb db;
    static Path reportDir;
    static String cliOut;
    static int exitCode;

    @TempDir
    static Path tmp;

    @BeforeAll
    static void reconcileOnce() throws Exception {
        db = ReconcileDb.fresh("report");
        Map<WindowKey, MeasureValues> stream = new LinkedHashMap<>();
        Map<WindowKey, MeasureValues> batch = new LinkedHashMap<>();
        for (int i = 0; i < WINDOWS; i++) {
            Instant w = START.plusSeconds(60L * i);
            long base = 800 + (i * 37 % 11) * 90;
            MeasureValues north = m(base, base / 20, base / 200, base * 1_250L + 333, base + base / 20 + base / 200);
            stream.put(key(w, "camp-north", "web"), north);
            batch.put(key(w, "camp-north", "web"), north);
            MeasureValues south = m(base / 2, base / 50, 0, base * 700L, base / 2 + base / 50);
            stream.put(key(w, "camp-south", "app"), south);
            batch.put(key(w, "camp-south", "app"), south);
        }
        // Late events the stream never counted: batch has more.
        batch.put(MISMATCHED, m(1500, 80, 9, 2_125_000_007L, 1589));
        batch.put(key(START.plusSeconds(60 * 30), "camp-south", "app"), m(450, 9, 0, 315_000_000, 459));
        batch.put(HOSTILE, m(10, 1, 1, 12_500_000, 12));
        stream.put(key(START.plusSeconds(60 * 5), "camp-east", "email"), m(4, 0, 0, 4_000, 4));
        db.streamAll(stream, 1);
        db.batchRange(START, START.plusSeconds(60L * WINDOWS), batch);

        Path config = db.configFile(tmp);
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        exitCode = ReconcileMain.execute(
                new CommandEnvironment(
                        db.environment(), Clock.fixed(Instant.parse("2026-11-29T03:00:00Z"), ZoneOffset.UTC)),
                new PrintWriter(out),
                new PrintWriter(err),
                "--from",
                START.toString(),
                "--to",
                START.plusSeconds(60L * WINDOWS).toString(),
                "--report-dir",
                tmp.resolve("reports").toString(),
                "--config",
                config.toString());
        cliOut = out.toString();
        assertThat(err.toString()).isEmpty();
        Matcher report = Pattern.compile("report: (.*report\\.html)").matcher(cliOut);
        assertThat(report.find()).as("report path in: %s", cliOut).isTrue();
        reportDir = Path.of(report.group(1)).getParent();
    }

    @AfterAll
    static void close() {
        if (db != null) db.close();
    }

    @Test
    void commandReportsBeyondTolerance() {
        assertThat(exitCode).isEqualTo(ExitCode.BEYOND_TOLERANCE.code());
        assertThat(cliOut)
                .contains("BEYOND TOLERANCE")
                .contains("keys 82: 78 match, 2 mismatch, 1 missing in stream, 1 missing in batch");
    }

    @Test
    void reportRendersInHeadlessChromium() throws Exception {
        HeadlessChromium chromium = HeadlessChromium.require();
        Path png = tmp.resolve("report.png");
        chromium.screenshot(reportDir.resolve("report.html"), png, 1280, 3000);
        // Kept for people to look at after a run.
        Files.createDirectories(Path.of("target"));
        Files.copy(png, Path.of("target", "report-screenshot.png"), StandardCopyOption.REPLACE_EXISTING);

        BufferedImage img = ImageIO.read(png.toFile());
        assertThat(img.getWidth()).isEqualTo(1280);
        Set<Integer> colours = new HashSet<>();
        long nonBackground = 0;
        int background = img.getRGB(2, 2);
        for (int y = 0; y < img.getHeight(); y += 2) {
            for (int x = 0; x < img.getWidth(); x += 2) {
                int rgb = img.getRGB(x, y);
                colours.add(rgb);
                if (rgb != background) nonBackground++;
            }
        }
        long sampled = (long) ((img.getWidth() + 1) / 2) * ((img.getHeight() + 1) / 2);
        assertThat(colours)
                .as("distinct colours: a rendered page, not a blank one")
                .hasSizeGreaterThan(100);
        assertThat(nonBackground)
                .as("pixels differing from the page background")
                .isGreaterThan(sampled / 5);
        // The verdict badge's red and the chart's blue (stream line) are on screen.
        assertThat(colours.stream().anyMatch(c -> near(c, 0xb42318)))
                .as("verdict red")
                .isTrue();
        assertThat(colours.stream().anyMatch(c -> near(c, 0x2563eb)))
                .as("stream blue")
                .isTrue();
    }

    @Test
    void renderedPageShowsTotalsAndMismatchesAndNoScriptRan() throws Exception {
        HeadlessChromium chromium = HeadlessChromium.require();
        String dom = chromium.dumpDom(reportDir.resolve("report.html"));
        assertThat(dom).doesNotContainIgnoringCase("<script").doesNotContainIgnoringCase("<img");
        Matcher title = Pattern.compile("<title>(.*?)</title>").matcher(dom);
        assertThat(title.find()).isTrue();
        assertThat(title.group(1)).startsWith("Reconciliation run ").doesNotContain("pwned");
        assertThat(dom).doesNotContain("<title>img</title>");

        String text = text(dom);
        assertThat(text).contains("Beyond tolerance");
        // Totals: spend stream vs batch vs final, in currency units.
        String totalsRow = text(row(dom, "total-spend_micros"));
        assertThat(totalsRow)
                .contains("Spend")
                .contains(dev.recount.reconcile.report.Money.grouped(spendStream()))
                .contains(dev.recount.reconcile.report.Money.grouped(spendBatch()));
        // The largest mismatch, with its key, and the hostile ids shown as text.
        assertThat(text).contains("2026-11-28 09:17").contains("camp-north").contains("2,125.000007");
        assertThat(text).contains(SCRIPT_CAMPAIGN).contains(IMG_CHANNEL);
        assertThat(Files.readString(reportDir.resolve("report.html"), StandardCharsets.UTF_8))
                .doesNotContain("http://")
                .doesNotContain("https://")
                .doesNotContainIgnoringCase("<link")
                .doesNotContain("url(");
    }

    static long spendStream() throws Exception {
        return total("stream_window_metrics");
    }

    static long spendBatch() throws Exception {
        return total("batch_window_metrics");
    }

    static long total(String table) throws Exception {
        try (var c = db.admin();
                var st = c.createStatement();
                var rs = st.executeQuery("SELECT sum(spend_micros) FROM " + table)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    static String row(String dom, String id) {
        Matcher m = Pattern.compile("<tr id=\"" + id + "\">(.*?)</tr>", Pattern.DOTALL)
                .matcher(dom);
        assertThat(m.find()).as("row %s", id).isTrue();
        return m.group(1);
    }

    /** The page's text as a reader sees it: tags dropped, entities decoded. */
    static String text(String html) {
        return html.replaceAll("(?s)<style.*?</style>", " ")
                .replaceAll("<[^>]*>", " ")
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&quot;", "\"")
                .replace("&#39;", "'")
                .replace("&amp;", "&")
                .replaceAll("\\s+", " ");
    }

    static boolean near(int rgb, int target) {
        int dr = ((rgb >> 16) & 0xff) - ((target >> 16) & 0xff);
        int dg = ((rgb >> 8) & 0xff) - ((target >> 8) & 0xff);
        int db = (rgb & 0xff) - (target & 0xff);
        return Math.abs(dr) < 12 && Math.abs(dg) < 12 && Math.abs(db) < 12;
    }
}
