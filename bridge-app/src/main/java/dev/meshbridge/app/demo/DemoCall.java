package dev.meshbridge.app.demo;

import com.google.protobuf.StringValue;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * {@code meshbridge call <host>}: resolves {@code xds:///<host>} through the bridge with grpc-java's own xDS client
 * (as a proxyless gRPC application would), makes N calls of the demo's {@code GreeterService/greet}, and prints which
 * instance answered each and the split. The client takes listeners, routes, clusters and endpoints from the bridge
 * over ADS; nothing in it knows where the instances are.
 */
public final class DemoCall {

    static final String USAGE = """
            Usage: meshbridge call HOST [--calls N] [--xds HOST:PORT]

              HOST             a catalog host with the demo's GreeterService, e.g.
                               %s
              --calls N        how many calls (default 20, at most 10000)
              --xds HOST:PORT  the bridge's xDS address (default 127.0.0.1:15010)
            """.formatted(DemoRegistrations.GREETER_HOST);

    /**
     * What the calls gave.
     *
     * @param answered per instance name, how many calls it answered
     * @param failures the status of each failed call
     */
    public record Split(Map<String, Integer> answered, List<String> failures) {
        public int total() {
            return answered.values().stream().mapToInt(Integer::intValue).sum() + failures.size();
        }
    }

    private DemoCall() {}

    /** Runs the command; returns the exit code (0: every call answered). */
    public static int run(String[] argv, PrintStream out, PrintStream err) {
        String host = null;
        int calls = 20;
        String xds = "127.0.0.1:15010";
        try {
            for (int i = 1; i < argv.length; i++) {
                switch (argv[i]) {
                    case "--calls", "-n" -> calls = Integer.parseInt(value(argv, ++i));
                    case "--xds" -> xds = value(argv, ++i);
                    case "--help", "-h" -> {
                        out.print(USAGE);
                        return 0;
                    }
                    default -> {
                        if (argv[i].startsWith("-") || host != null)
                            throw new IllegalArgumentException("unknown argument '" + argv[i] + "'");
                        host = argv[i];
                    }
                }
            }
            if (host == null) throw new IllegalArgumentException("give the host to call");
            if (calls < 1 || calls > 10_000) throw new IllegalArgumentException("--calls must be in 1..10000");
            if (!xds.matches("[A-Za-z0-9.\\-\\[\\]:]+:[0-9]{1,5}"))
                throw new IllegalArgumentException("--xds needs HOST:PORT, got '" + xds + "'");
        } catch (IllegalArgumentException e) {
            err.println("meshbridge call: " + e.getMessage());
            err.print(USAGE);
            return 1;
        }
        // grpc-java reads its bootstrap once, when its xDS classes load: set it before the first channel
        System.setProperty("io.grpc.xds.bootstrapConfig", bootstrap(xds));
        out.println("resolving xds:///" + host + " through the bridge at " + xds + " (grpc-java xDS client)");
        ManagedChannel channel = Grpc.newChannelBuilder("xds:///" + host, InsecureChannelCredentials.create())
                .build();
        try {
            Split split = call(channel, calls, out);
            print(split, out);
            return split.failures().isEmpty() ? 0 : 1;
        } finally {
            channel.shutdownNow();
        }
    }

    /** The bootstrap grpc-java reads: the bridge as its one xDS server, this process as a proxyless node. */
    static String bootstrap(String xds) {
        return "{\"xds_servers\": [{\"server_uri\": \"" + xds + "\", \"channel_creds\": [{\"type\": \"insecure\"}],"
                + " \"server_features\": [\"xds_v3\"]}],"
                + " \"node\": {\"id\": \"meshbridge-call-"
                + ProcessHandle.current().pid()
                + "\", \"cluster\": \"meshbridge-call\", \"locality\": {}}}";
    }

    /** Makes {@code n} calls, one line per call on {@code out}; which instance answered each. */
    public static Split call(Channel channel, int n, PrintStream out) {
        Map<String, Integer> answered = new TreeMap<>();
        List<String> failures = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
            try {
                // the first call waits for the xDS resources; later ones are answered at once
                String reply = ClientCalls.blockingUnaryCall(
                                channel,
                                DemoBackends.GREET,
                                CallOptions.DEFAULT.withDeadlineAfter(i == 1 ? 20 : 5, TimeUnit.SECONDS),
                                StringValue.of("call " + i))
                        .getValue();
                int from = reply.lastIndexOf(DemoBackends.FROM);
                String instance = from < 0 ? reply : reply.substring(from + DemoBackends.FROM.length());
                answered.merge(instance, 1, Integer::sum);
                if (out != null) out.printf("call %3d: %s%n", i, reply);
            } catch (StatusRuntimeException e) {
                failures.add(e.getStatus().getCode() + ": " + e.getStatus().getDescription());
                if (out != null)
                    out.printf(
                            "call %3d: failed: %s %s%n",
                            i, e.getStatus().getCode(), e.getStatus().getDescription());
            }
        }
        return new Split(answered, failures);
    }

    static void print(Split split, PrintStream out) {
        out.println();
        out.println("split over " + split.total() + " calls:");
        split.answered()
                .forEach((instance, count) ->
                        out.printf("  %-12s %4d  (%.0f%%)%n", instance, count, 100.0 * count / split.total()));
        if (!split.failures().isEmpty())
            out.printf("  %-12s %4d%n", "failed", split.failures().size());
    }

    private static String value(String[] argv, int i) {
        if (i >= argv.length) throw new IllegalArgumentException(argv[i - 1] + " needs a value");
        return argv[i];
    }
}
