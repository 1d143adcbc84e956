package dev.meshbridge.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.app.config.BridgeConfig;
import dev.meshbridge.app.demo.Demo;
import dev.meshbridge.app.demo.DemoCall;
import dev.meshbridge.app.demo.DemoRegistrations;
import dev.meshbridge.core.config.RegistriesConfig;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.NameResolverRegistry;
import io.grpc.xds.XdsNameResolverProvider;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code ./meshbridge --demo} and {@code meshbridge call}: grpc-java's own xDS client resolves the demo's Triple
 * service through the bridge and calls its real backends, registered in ZooKeeper as Dubbo registers Triple providers
 * (weights 100 and 50, and one disabled).
 */
class DemoCallTest {

    @Test
    void grpcJavaXdsClient_callsTheDemosRealBackends_splitFollowsTheWeights_disabledGetsNone() throws Exception {
        var providers = RegistriesConfig.loadProviders();
        try (Demo demo = Demo.start();
                Bridge bridge =
                        Bridge.start(BridgeConfig.parse("demo", demo.config(0, 0, 0), providers), null, providers)) {
            await().atMost(Duration.ofSeconds(30)).until(bridge::ready);
            String scheme = "meshbridge-demo-call";
            Map<String, ?> xdsServer = Map.of(
                    "server_uri", "127.0.0.1:" + bridge.xdsPort(),
                    "channel_creds", List.of(Map.of("type", "insecure")),
                    "server_features", List.of("xds_v3"));
            NameResolverRegistry.getDefaultRegistry()
                    .register(XdsNameResolverProvider.createForTest(
                            scheme,
                            Map.of(
                                    "xds_servers",
                                    List.of(xdsServer),
                                    "node",
                                    Map.of("id", "demo-call", "cluster", "demo"))));
            ManagedChannel channel = Grpc.newChannelBuilder(
                            scheme + ":///" + DemoRegistrations.GREETER_HOST, InsecureChannelCredentials.create())
                    .build();
            ByteArrayOutputStream printed = new ByteArrayOutputStream();
            try {
                DemoCall.Split first =
                        DemoCall.call(channel, 10, new PrintStream(printed, true, StandardCharsets.UTF_8));
                assertThat(first.failures()).isEmpty();
                assertThat(printed.toString(StandardCharsets.UTF_8)).contains("call   1: hello call 1 from greeter-");
                // grpc-java's weighted_target picks among the localities that are READY: a call made before
                // greeter-b's connection is up goes to greeter-a. The split is measured once both have answered, over
                // 300 calls (a CI run once counted 117 of 150 for greeter-a within 145 ms of the first call: that
                // start, or a draw 2.9 standard deviations out, which the old bounds of 85..115 allowed about 1%)
                PrintStream quiet = new PrintStream(OutputStream.nullOutputStream());
                await().atMost(Duration.ofSeconds(60))
                        .until(() ->
                                DemoCall.call(channel, 10, quiet).answered().size() >= 2);

                DemoCall.Split split = DemoCall.call(channel, 300, quiet);
                assertThat(split.failures()).isEmpty();
                // greeter-c is registered disabled: it gets none; greeter-a (weight 100) about twice greeter-b (50):
                // 200 of 300 expected, 8.2 calls one standard deviation; equal weights would give 150, 4:1 240
                assertThat(split.answered()).containsOnlyKeys("greeter-a", "greeter-b");
                assertThat(split.answered().get("greeter-a"))
                        .as("share of weight 100 against 50 over 300 calls: %s", split.answered())
                        .isBetween(170, 230);
            } finally {
                channel.shutdownNow();
            }
        }
    }

    @Test
    void callCommand_refusesBadArguments_withItsUsage() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8);
        assertThat(DemoCall.run(new String[] {"call"}, System.out, e)).isEqualTo(1);
        assertThat(DemoCall.run(new String[] {"call", "x.dubbo", "--calls", "0"}, System.out, e))
                .isEqualTo(1);
        assertThat(DemoCall.run(new String[] {"call", "x.dubbo", "--xds", "no port"}, System.out, e))
                .isEqualTo(1);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains("give the host to call")
                .contains("--calls must be in 1..10000")
                .contains("--xds needs HOST:PORT")
                .contains("Usage: meshbridge call HOST");
    }
}
