package dev.meshbridge.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/**
 * Ratios of the interleaved measurements: for each pair (a bridge window or block and the baseline's right after it,
 * same catalog, same load), baseline / bridge (above 1: the bridge does better); their median and spread. A burst of
 * load from elsewhere on the machine lands on one pair, not on one side.
 *
 * @param ratios per pair, in order (pairs where either side measured nothing are left out)
 */
record PairRatios(List<Double> ratios) {

    static <T> PairRatios of(List<T> bridge, List<T> baseline, ToDoubleFunction<T> value) {
        List<Double> out = new ArrayList<>();
        for (int i = 0; i < Math.min(bridge.size(), baseline.size()); i++) {
            double b = value.applyAsDouble(bridge.get(i));
            double base = value.applyAsDouble(baseline.get(i));
            if (Double.isNaN(b) || Double.isNaN(base) || b <= 0 || base < 0) continue;
            out.add(base / b);
        }
        return new PairRatios(List.copyOf(out));
    }

    boolean empty() {
        return ratios.isEmpty();
    }

    double median() {
        return quantile(0.5);
    }

    double min() {
        return sorted()[0];
    }

    double max() {
        double[] s = sorted();
        return s[s.length - 1];
    }

    /** Linear-interpolated quantile ({@code q} in 0..1) of the ratios. */
    double quantile(double q) {
        double[] s = sorted();
        if (s.length == 1) return s[0];
        double pos = q * (s.length - 1);
        int i = (int) Math.floor(pos);
        int j = Math.min(s.length - 1, i + 1);
        return s[i] + (s[j] - s[i]) * (pos - i);
    }

    private double[] sorted() {
        double[] s = ratios.stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(s);
        return s;
    }

    /** For instance {@code 6.6x p99, median of 6 interleaved pairs (3.1x to 9.0x)}; {@code -} when none. */
    String describe(String what) {
        if (empty()) return "-";
        return x(median()) + " " + what + ", median of " + ratios.size() + " interleaved pair"
                + (ratios.size() == 1 ? "" : "s") + " (" + x(min()) + " to " + x(max()) + ")";
    }

    static String x(double ratio) {
        return String.format(Locale.ROOT, ratio >= 10 ? "%.0fx" : "%.1fx", ratio);
    }
}
