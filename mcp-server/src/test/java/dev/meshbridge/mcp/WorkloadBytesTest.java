package dev.meshbridge.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Locality;
import dev.meshbridge.mcp.api.networking.v1alpha3.WorkloadEntry;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The WorkloadEntry bytes the inline ServiceEntry writes directly are those of the message built and serialized
 * deterministically, with the same notes, and whatever {@link IstioValidation#workloadEntry} would refuse is left out
 * before it is written.
 */
class WorkloadBytesTest {

    static final Set<String> PORTS = new LinkedHashSet<>(List.of("http", "grpc", "dubbo"));

    @Test
    void writtenBytesAreTheSerializedMessage() {
        Random random = new Random(22);
        List<Endpoint> endpoints = new ArrayList<>(List.of(
                Endpoint.builder("10.0.0.1").port("http", 8080).build(),
                Endpoint.builder("10.0.0.2")
                        .port("http", 1)
                        .port("grpc", 65535)
                        .weight(0)
                        .build(),
                Endpoint.builder("fd00::1").port("zzz", 80).port("dubbo", 20880).build(),
                Endpoint.builder("10.0.0.3").port("other", 80).build(),
                Endpoint.builder("orders.example").port("http", 80).build(),
                Endpoint.builder("10.0.0.4")
                        .port("http", 80)
                        .label("version", "")
                        .label("a", "b")
                        .label("app.kubernetes.io/name", "x".repeat(63))
                        .locality(new Locality("eu", "", "sub"))
                        .build(),
                Endpoint.builder("10.0.0.5")
                        .port("http", 80)
                        .locality(new Locality("eu/west", "a", ""))
                        .build(),
                Endpoint.builder("10.0.0.6")
                        .port("grpc", 9090)
                        .weight(Endpoint.MAX_WEIGHT)
                        .locality(new Locality("eu", "eu-1", "rack-" + "7".repeat(200)))
                        .build()));
        for (int i = 0; i < 500; i++) {
            Endpoint.Builder b = Endpoint.builder("10." + random.nextInt(256) + "." + random.nextInt(256) + ".1");
            for (String p : List.of("http", "grpc", "dubbo", "extra")) {
                if (random.nextInt(3) > 0) b.port(p, 1 + random.nextInt(65535));
            }
            b.port("http", 1 + random.nextInt(65535));
            int labels = random.nextInt(40);
            for (int l = 0; l < labels; l++) b.label("k" + random.nextInt(1000), "v".repeat(random.nextInt(60)));
            b.weight(random.nextInt(Endpoint.MAX_WEIGHT + 1));
            b.locality(new Locality(
                    random.nextBoolean() ? "" : "r" + random.nextInt(9),
                    random.nextBoolean() ? "" : "z".repeat(random.nextInt(150)),
                    random.nextBoolean() ? "" : "s" + random.nextInt(9)));
            endpoints.add(b.build());
        }
        int written = 0;
        // one cache of label bytes for all, as for the endpoints of one service; each endpoint twice in a row too
        ServiceEntryTranslator.LabelBytes shared = new ServiceEntryTranslator.LabelBytes();
        for (Endpoint e : endpoints) {
            for (int twice = 0; twice < 2; twice++) {
                var again = ServiceEntryTranslator.workloadBytes(e, PORTS, new ArrayList<>(), shared);
                WorkloadEntry we = ServiceEntryTranslator.workload(e, PORTS, null, new ArrayList<>());
                assertThat(again).isEqualTo(we == null ? null : McpResource.deterministicBytes(we));
            }
        }
        for (Endpoint e : endpoints) {
            List<String> fromMessage = new ArrayList<>();
            WorkloadEntry we = ServiceEntryTranslator.workload(e, PORTS, null, fromMessage);
            List<String> direct = new ArrayList<>();
            var bytes = ServiceEntryTranslator.workloadBytes(e, PORTS, direct);
            assertThat(direct).as("notes of %s", e).isEqualTo(fromMessage);
            if (we == null) {
                assertThat(bytes).as("left out: %s", e).isNull();
                continue;
            }
            assertThat(bytes).as("bytes of %s", e).isEqualTo(McpResource.deterministicBytes(we));
            // nothing written directly is refused by the rules the full translation runs
            assertThat(IstioValidation.workloadEntry(we, PORTS)).as("%s", e).isEmpty();
            written++;
        }
        assertThat(written).isGreaterThan(400);
    }
}
