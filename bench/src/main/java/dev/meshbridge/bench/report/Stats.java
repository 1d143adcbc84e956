package dev.meshbridge.bench.report;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Percentiles of nanosecond samples, written as milliseconds into a key/value report. */
public final class Stats {

    private Stats() {}

    /** Nearest-rank percentile ({@code p} in 0..100) of sorted values; 0 for none. */
    public static long percentile(long[] sorted, double p) {
        if (sorted.length == 0) return 0;
        int i = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
    }

    public static long[] sorted(List<Long> values) {
        long[] a = new long[values.size()];
        for (int i = 0; i < a.length; i++) a[i] = values.get(i);
        Arrays.sort(a);
        return a;
    }

    /** Puts {@code prefix.count}, {@code .p50}, {@code .p90}, {@code .p99}, {@code .max} (ms) of nanosecond samples. */
    public static void put(Map<String, String> out, String prefix, List<Long> nanos) {
        long[] s = sorted(nanos);
        out.put(prefix + ".count", Integer.toString(s.length));
        out.put(prefix + ".p50", ms(percentile(s, 50)));
        out.put(prefix + ".p90", ms(percentile(s, 90)));
        out.put(prefix + ".p99", ms(percentile(s, 99)));
        out.put(prefix + ".max", ms(percentile(s, 100)));
    }

    public static String ms(long nanos) {
        return String.format(Locale.ROOT, "%.3f", nanos / 1e6);
    }
}
