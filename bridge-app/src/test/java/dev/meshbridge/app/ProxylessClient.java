package dev.meshbridge.app;

import java.util.List;
import java.util.Map;

/**
 * A proxyless gRPC client implementation under test: it resolves {@code xds:///<host>} through the bridge's xDS server
 * with its own xDS client and calls {@link IdentityBackend#NAME}, whose answer names the backend that served it.
 */
interface ProxylessClient extends AutoCloseable {

    /** The implementation and its version, as a report names it (e.g. {@code grpc-java 1.85.1}). */
    String implementation();

    /** Makes {@code n} calls to {@code xds:///<host>}, one after another, each with a 5 s deadline. */
    Calls call(String host, int n);

    /** Starts calling the hosts in turn, in the background, until {@link #stopTraffic()}. */
    void startTraffic(List<String> hosts);

    /** The background traffic's calls so far. */
    Calls traffic();

    /** Stops the background traffic after the call in flight; all its calls. */
    Calls stopTraffic();

    @Override
    void close();

    /** Waits up to 30 s until the calls to {@code host} are answered by exactly these backends. */
    default void awaitAnsweredBy(String host, String... names) {
        java.util.Set<String> expected = java.util.Set.of(names);
        org.awaitility.Awaitility.await()
                .atMost(java.time.Duration.ofSeconds(30))
                .untilAsserted(() -> org.assertj.core.api.Assertions.assertThat(
                                call(host, 4 * expected.size()).answeredBy().keySet())
                        .isEqualTo(expected));
    }

    /** Waits up to 30 s until the background traffic has made {@code n} more calls (answered or not); its calls. */
    default Calls awaitTraffic(long n) {
        Calls start = traffic();
        long target = start.answered() + start.failures().size() + n;
        org.awaitility.Awaitility.await()
                .atMost(java.time.Duration.ofSeconds(30))
                .until(() -> {
                    Calls now = traffic();
                    return now.answered() + now.failures().size() >= target;
                });
        return traffic();
    }

    /**
     * What a run of calls gave.
     *
     * @param answeredBy backend name to the number of calls it answered
     * @param failures one line per failed call: host, status code and description
     */
    record Calls(Map<String, Long> answeredBy, List<String> failures) {
        public Calls {
            answeredBy = Map.copyOf(answeredBy);
            failures = List.copyOf(failures);
        }

        long answered() {
            return answeredBy.values().stream().mapToLong(Long::longValue).sum();
        }

        long answeredBy(String backend) {
            return answeredBy.getOrDefault(backend, 0L);
        }
    }
}
