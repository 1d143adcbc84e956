package dev.meshbridge.bench;

import dev.meshbridge.bench.jmh.JmhSuite;
import java.util.ArrayList;
import java.util.List;

/** Everything a run produced, for {@link ResultsWriter}. */
final class Results {

    final LoadProfile load;
    final Machine machine;
    final String command;
    final Side bridge = new Side("bridge");
    final Side baseline = new Side("baseline");
    List<JmhSuite.Row> jmh = List.of();
    List<EdsSizes.Row> edsSizes = List.of();
    String jmhError;
    long zkWriteMillis = -1;
    long clockSkewNanos;
    List<String> worldJvmArgs = List.of();
    String worldHeap;
    String loadAverageEnd;
    long durationMillis;
    final List<String> errors = new ArrayList<>();

    Results(LoadProfile load, Machine machine, String command) {
        this.load = load;
        this.machine = machine;
        this.command = command;
    }

    /** The reference load: 100,000 endpoints, 1,000 streams, 5,000 streams, 50 changes per second. */
    boolean referenceLoad() {
        return load.endpoints() == 100_000
                && load.streams() == 1_000
                && load.bigStreams() == 5_000
                && load.rate() == 50;
    }
}
