package dev.meshbridge.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.text.ParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

/**
 * A JFR recording of this JVM over one phase (the JDK's sampling profiler, settings {@code profile}: execution
 * samples every 5 ms per thread, allocation samples), summarised per thread group: where the CPU samples fall (self
 * time by method, and the project's or java-control-plane's methods on the stack) and which classes are allocated
 * most.
 */
final class JfrProfile implements AutoCloseable {

    /**
     * Samples of one thread group.
     *
     * @param selfTop methods on top of the stack, by samples
     * @param codeTop the project's (and java-control-plane's) methods anywhere on the stack, by samples (inclusive)
     */
    record Group(
            String name,
            long samples,
            List<Map.Entry<String, Long>> selfTop,
            List<Map.Entry<String, Long>> codeTop,
            Map<String, Long> inclusive) {

        /** The share of this group's samples with the method (e.g. {@code ads.AdsEngine.changed}) on the stack. */
        double inclusiveShare(String method) {
            return inclusive.getOrDefault(method, 0L) / (double) Math.max(1, samples);
        }
    }

    /** The summary of a recording. */
    record Summary(
            Path file,
            long samples,
            List<Group> groups,
            List<Map.Entry<String, Long>> allocations,
            long allocationWeight) {}

    static final int PERIOD_MILLIS = 5;

    private final Recording recording;
    private final Path file;

    JfrProfile(Path file) throws IOException, ParseException {
        this.file = file;
        this.recording = new Recording(Configuration.getConfiguration("profile"));
        recording.enable("jdk.ExecutionSample").withPeriod(java.time.Duration.ofMillis(PERIOD_MILLIS));
        recording.setToDisk(true);
        recording.setDestination(file);
        recording.start();
    }

    Summary stop() throws IOException {
        recording.stop();
        recording.close();
        Map<String, Long> perGroup = new HashMap<>();
        Map<String, Map<String, Long>> self = new HashMap<>();
        Map<String, Map<String, Long>> code = new HashMap<>();
        Map<String, Long> allocations = new HashMap<>();
        long samples = 0;
        long allocationWeight = 0;
        for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
            String type = e.getEventType().getName();
            if (type.equals("jdk.ExecutionSample")) {
                RecordedThread t = e.getThread("sampledThread");
                String group = ThreadCost.group(t == null ? "?" : String.valueOf(t.getJavaName()));
                RecordedStackTrace st = e.getStackTrace();
                if (st == null || st.getFrames().isEmpty()) continue;
                samples++;
                perGroup.merge(group, 1L, Long::sum);
                self.computeIfAbsent(group, g -> new HashMap<>())
                        .merge(frame(st.getFrames().get(0)), 1L, Long::sum);
                java.util.Set<String> seen = new java.util.HashSet<>();
                for (RecordedFrame f : st.getFrames()) {
                    String cls = f.getMethod().getType().getName();
                    boolean ours = cls.startsWith("dev.meshbridge.") && !cls.startsWith("dev.meshbridge.bench.");
                    boolean lambda =
                            cls.contains("$$Lambda") || f.getMethod().getName().startsWith("lambda$");
                    if ((ours || cls.startsWith("io.envoyproxy.controlplane.")) && !lambda && seen.add(frame(f))) {
                        code.computeIfAbsent(group, g -> new HashMap<>()).merge(frame(f), 1L, Long::sum);
                    }
                }
            } else if (type.equals("jdk.ObjectAllocationSample")) {
                long w = 1; // counted: one sample's weight lumps all the thread allocated since its previous one
                allocationWeight += w;
                String cls = e.getClass("objectClass").getName();
                RecordedThread t = e.getThread("eventThread");
                String group = ThreadCost.group(t == null ? "?" : String.valueOf(t.getJavaName()));
                allocations.merge(group + ": " + cls, w, Long::sum);
            }
        }
        List<Group> groups = new ArrayList<>();
        perGroup.entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .forEach(g -> groups.add(new Group(
                        g.getKey(),
                        g.getValue(),
                        top(self.getOrDefault(g.getKey(), Map.of()), 6),
                        top(code.getOrDefault(g.getKey(), Map.of()), 8),
                        code.getOrDefault(g.getKey(), Map.of()))));
        return new Summary(file, samples, groups, top(allocations, 12), allocationWeight);
    }

    /** A group of a summary, or null. */
    static Group group(Summary s, String name) {
        if (s == null) return null;
        for (Group g : s.groups()) if (g.name().equals(name)) return g;
        return null;
    }

    private static String frame(RecordedFrame f) {
        String cls = f.getMethod().getType().getName();
        int dot = cls.lastIndexOf('.');
        String pkg = dot < 0 ? "" : cls.substring(0, dot);
        String simple = cls.substring(dot + 1);
        String shortPkg = pkg.replace("io.grpc.netty.shaded.io.netty.", "netty.")
                .replace("io.grpc.netty.shaded.", "")
                .replace("com.google.protobuf", "protobuf")
                .replace("dev.meshbridge.", "")
                .replace("io.envoyproxy.controlplane.", "jcp.");
        return (shortPkg.isEmpty() ? "" : shortPkg + ".") + simple + "."
                + f.getMethod().getName();
    }

    private static List<Map.Entry<String, Long>> top(Map<String, Long> counts, int n) {
        List<Map.Entry<String, Long>> out = new ArrayList<>();
        counts.entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .limit(n)
                .forEach(e -> out.add(Map.entry(e.getKey(), e.getValue())));
        return out;
    }

    @Override
    public void close() {
        recording.close();
    }
}
