package dev.meshbridge.bench;

import dev.meshbridge.bench.load.SyntheticCatalog;
import dev.meshbridge.core.spi.ServiceUpsert;
import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.title.TextTitle;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * How cost grows with the catalog: for each size (10,000, 100,000 and 1,000,000 endpoints by default), each side
 * (the bridge, then the java-control-plane baseline) ingests the catalog cold through the SPI into a fresh target, and
 * the harness measures the time until served, the retained heap, the CPU and garbage of single changes (no client)
 * and, for the bridge, the bytes and time of one full ServiceEntry push to an istiod-like client. Writes a table
 * ({@code GROWTH.md}) and PNG charts beside it.
 */
final class Growth {

    /** One size, one side. */
    record Point(
            String side,
            long endpoints,
            long servedMillis,
            long retainedBytes,
            double changeCpuMillis,
            double changeKb,
            long pushBytes,
            long pushMillis,
            long pushDecodedMillis) {}

    private final World world;
    private final int instances;
    private final int[] sizes;
    final List<Point> points = new ArrayList<>();
    /** The sides measured at each size, in order. */
    String[] sides = {"bridge", "baseline"};

    final List<String> errors = new ArrayList<>();
    String loadStart = Machine.currentLoadAverage();
    String loadEnd = "?";

    Growth(World world, int instances, int... services) {
        this.world = world;
        this.instances = instances;
        this.sizes = services;
    }

    void run() {
        for (int services : sizes) {
            for (String side : sides) {
                try {
                    points.add(measure(side, services));
                } catch (Exception | OutOfMemoryError e) {
                    Bench.log("growth: %s at %,d services failed: %s", side, services, e);
                    errors.add(side + " at " + services + " services: " + e);
                }
            }
        }
        loadEnd = Machine.currentLoadAverage();
    }

    private Point measure(String side, int services) throws Exception {
        SyntheticCatalog catalog = new SyntheticCatalog(services, instances);
        long endpoints = (long) services * instances;
        // the heap before the upserts exist: the catalog's model (endpoints, label maps) is the bridge's to hold
        long heap0 = Heap.settled();
        List<ServiceUpsert> upserts = new ArrayList<>(services);
        for (int i = 0; i < services; i++) upserts.add(catalog.upsert(i));
        try (Target target = side.equals("bridge") ? new BridgeTarget() : new BaselineTarget()) {
            Bench.log("growth: %s ingests %,d endpoints", side, endpoints);
            var complete = target.expect(services, endpoints);
            long start = System.nanoTime();
            for (ServiceUpsert u : upserts) target.aggregator().accept(u);
            complete.get(Bench.LONG, TimeUnit.MILLISECONDS);
            target.awaitServed(target.last().sequence(), Bench.LONG);
            long served = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            target.catalogReady();
            upserts.clear();
            long retained = Heap.usedAfterGc() - heap0;
            Bench.log(
                    "growth: %s served %,d endpoints in %d ms, retained %.1f MB",
                    side, endpoints, served, retained / 1e6);

            boolean bridge = side.equals("bridge");
            // the baseline rebuilds its whole snapshot per change: a few changes say enough at every size
            int warmUp = bridge ? 2_000 : 5;
            int n = bridge ? 300 : (endpoints >= 1_000_000 ? 5 : 20);
            int[] ids = {0};
            SpiDriver driver =
                    new SpiDriver(catalog, target.aggregator(), null, () -> 1 + ids[0]++ % (Bench.QUIET_IDS - 1), 7);
            for (int k = 0; k < warmUp; k += 50) {
                for (int j = 0; j < Math.min(50, warmUp); j++) driver.change(driver.randomService());
                target.settle(Bench.LONG);
            }
            // then single changes, as measured, so the per-snapshot code is compiled (see Bench.SINGLE_WARM_UP)
            for (int k = 0; bridge && k < Bench.SINGLE_WARM_UP; k++) {
                driver.change(driver.randomService());
                target.settle(Bench.LONG);
            }
            target.applyPaced(Bench.LONG);
            ThreadCost before = ThreadCost.now();
            for (int k = 0; k < n; k++) {
                long previous = target.last().sequence();
                driver.change(driver.randomService());
                target.settle(Bench.LONG);
                if (target.last().sequence() <= previous) throw new IllegalStateException("no snapshot after a change");
            }
            target.applyPaced(Bench.LONG);
            ThreadCost.Cost cost = ThreadCost.sum(ThreadCost.now().since(before), target.changeGroups());
            double cpu = cost.cpu() / 1e6 / n;
            double kb = cost.allocated() / 1e3 / n;

            long pushBytes = -1;
            long pushMillis = -1;
            long pushDecodedMillis = -1;
            if (target.mcpPort() > 0) {
                Map<String, String> r = world.call(Bench.LONG, "mcp", target.mcpPort(), services, Bench.LONG);
                pushBytes = Long.parseLong(r.get("bytes"));
                pushMillis = Long.parseLong(r.get("millis"));
                pushDecodedMillis = Long.parseLong(r.get("decodedMillis"));
                Bench.log("growth: %s at %,d endpoints: istiod-like client %s", side, endpoints, r);
                world.call(Bench.LONG, "mcp-close");
            }
            Bench.log(
                    "growth: %s at %,d endpoints: change %.3f ms CPU, %.1f KB; full ServiceEntry push %d B in %d ms",
                    side, endpoints, cpu, kb, pushBytes, pushMillis);
            return new Point(side, endpoints, served, retained, cpu, kb, pushBytes, pushMillis, pushDecodedMillis);
        }
    }

    // ------------------------------------------------------------------ output

    void write(Path dir, String command, long durationMillis) throws IOException {
        Files.createDirectories(dir);
        chart(
                dir.resolve("growth-ingest.png"),
                "Cold ingest through the SPI, to served",
                "seconds",
                true,
                p -> p.servedMillis() / 1e3);
        chart(
                dir.resolve("growth-heap.png"),
                "Retained heap with the catalog",
                "MB",
                true,
                p -> p.retainedBytes() / 1e6);
        chart(
                dir.resolve("growth-change.png"),
                "CPU of one single-instance change (no client)",
                "ms",
                true,
                p -> p.changeCpuMillis());
        chart(
                dir.resolve("growth-push.png"),
                "One full ServiceEntry push to an istiod-like client (bridge)",
                "MB",
                false,
                p -> p.pushBytes() < 0 ? Double.NaN : p.pushBytes() / 1e6);
        StringBuilder md = new StringBuilder();
        md.append("# meshbridge growth: cost against catalog size\n\n");
        md.append("Generated by the `bench` module (`")
                .append(command)
                .append("`); do not edit by hand. Each size ")
                .append("and side ingests the synthetic catalog (services x ")
                .append(instances)
                .append(" instances, the SPI load of `RESULTS.md`) cold into a fresh target in one JVM, one after the ")
                .append("other: served = every server applied the first complete snapshot; retained = heap after full ")
                .append("GCs minus the heap before the target existed; change = CPU and allocation of the change ")
                .append("threads (bridge: aggregator, xDS, MCP; baseline: aggregator and snapshot producer) per ")
                .append("single-instance change, each published and applied before the next, no client, after a ")
                .append(
                        "warm-up; push = one full ServiceEntry response to a new istiod-like client, from its subscription ")
                .append("to the response received whole (after a first connection warmed the client's JVM up), and in ")
                .append("brackets until the client had also decoded every resource (the baseline serves no MCP).\n\n");
        md.append(String.format(
                Locale.ROOT,
                "- **Date**: %s%n- **Run time**: %.1f s%n- **Machine load average** at start %s, at end %s (2 cores, "
                        + "shared with other builds)%n- **Bridge JVM**: `%s`%n%n",
                java.time.Instant.now(),
                durationMillis / 1e3,
                loadStart,
                loadEnd,
                String.join(
                        " ",
                        java.lang.management.ManagementFactory.getRuntimeMXBean()
                                .getInputArguments())));
        md.append(
                "| endpoints | side | served after | retained heap | per endpoint | CPU per change | garbage per change "
                        + "| full ServiceEntry push |\n");
        md.append("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
        for (Point p : points) {
            md.append(String.format(
                    Locale.ROOT,
                    "| %,d | %s | %.1f s | %.0f MB | %.0f B | %.3f ms | %.1f KB | %s |%n",
                    p.endpoints(),
                    p.side(),
                    p.servedMillis() / 1e3,
                    p.retainedBytes() / 1e6,
                    p.retainedBytes() / (double) p.endpoints(),
                    p.changeCpuMillis(),
                    p.changeKb(),
                    p.pushBytes() < 0
                            ? "-"
                            : String.format(
                                    Locale.ROOT,
                                    "%.1f MB in %.1f s (decoded %.1f s)",
                                    p.pushBytes() / 1e6,
                                    p.pushMillis() / 1e3,
                                    p.pushDecodedMillis() / 1e3)));
        }
        md.append("\n![ingest](growth-ingest.png) ![heap](growth-heap.png)\n\n");
        md.append("![change](growth-change.png) ![push](growth-push.png)\n");
        if (!errors.isEmpty()) {
            md.append("\n## Failures\n\n");
            for (String e : errors) md.append("- ").append(e.replace('|', '/')).append('\n');
        }
        Files.writeString(dir.resolve("GROWTH.md"), md.toString());
    }

    private void chart(Path file, String title, String unit, boolean logY, ToDoubleFunction<Point> value)
            throws IOException {
        XYSeriesCollection data = new XYSeriesCollection();
        for (String side : new String[] {"bridge", "baseline"}) {
            XYSeries s = new XYSeries(side.equals("bridge") ? "meshbridge" : "java-control-plane baseline");
            for (Point p : points) {
                double v = value.applyAsDouble(p);
                if (p.side().equals(side) && !Double.isNaN(v) && (!logY || v > 0)) s.add(p.endpoints(), v);
            }
            if (s.getItemCount() > 0) data.addSeries(s);
        }
        LogAxis x = new LogAxis("endpoints");
        x.setBase(10);
        x.setSmallestValue(1);
        NumberAxis y;
        if (logY) {
            LogAxis log = new LogAxis(unit);
            log.setBase(10);
            log.setSmallestValue(1e-3);
            XYPlot plot = new XYPlot(data, x, log, renderer());
            save(file, title, plot);
            return;
        }
        y = new NumberAxis(unit);
        save(file, title, new XYPlot(data, x, y, renderer()));
    }

    private static XYLineAndShapeRenderer renderer() {
        XYLineAndShapeRenderer r = new XYLineAndShapeRenderer(true, true);
        r.setSeriesPaint(0, new Color(0x1f77b4));
        r.setSeriesPaint(1, new Color(0xd62728));
        r.setSeriesStroke(0, new BasicStroke(2f));
        r.setSeriesStroke(1, new BasicStroke(2f));
        return r;
    }

    private static void save(Path file, String title, XYPlot plot) throws IOException {
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        JFreeChart chart = new JFreeChart(null, JFreeChart.DEFAULT_TITLE_FONT, plot, true);
        chart.setTitle(new TextTitle(title));
        chart.setBackgroundPaint(Color.WHITE);
        ChartUtils.saveChartAsPNG(file.toFile(), chart, 640, 400);
    }
}
