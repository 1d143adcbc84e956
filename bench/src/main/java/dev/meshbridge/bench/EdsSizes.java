package dev.meshbridge.bench;

import dev.meshbridge.bench.load.SyntheticCatalog;
import dev.meshbridge.core.aggregate.ServiceAggregator;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.MeshSnapshot;
import dev.meshbridge.xds.EnvoyTranslator;
import dev.meshbridge.xds.XdsResource;
import dev.meshbridge.xds.XdsType;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The size of the Delta EDS response for one changed service of each kind in the load, with the bridge's default
 * {@code lbMetadataLabels} (every label) and with none: how much of the per-endpoint bytes the labels are.
 */
final class EdsSizes {

    /** One service kind's response sizes. */
    record Row(String kind, int endpoints, int withLabels, int withoutLabels, int budget) {}

    private EdsSizes() {}

    static List<Row> measure(int instances) throws Exception {
        SyntheticCatalog catalog = new SyntheticCatalog(3, instances);
        EnvoyTranslator all = new EnvoyTranslator();
        EnvoyTranslator none = new EnvoyTranslator(new EnvoyTranslator.Options(Duration.ofSeconds(5), true, Set.of()));
        List<Row> rows = new ArrayList<>();
        try (ServiceAggregator aggregator = new ServiceAggregator(ServiceAggregator.Options.DEFAULTS)) {
            for (int i = 0; i < 3; i++) aggregator.accept(catalog.upsert(i));
            MeshSnapshot s = aggregator.flushNow().get();
            for (int i = 0; i < 3; i++) {
                MeshService service = s.service(catalog.host(i));
                String cluster = catalog.subscription(i).clusters().get(0);
                rows.add(new Row(
                        catalog.kind(i)
                                .name()
                                .toLowerCase(java.util.Locale.ROOT)
                                .replace('_', ' '),
                        instances,
                        size(all.translate(service).find(XdsType.ENDPOINT, cluster)),
                        size(none.translate(service).find(XdsType.ENDPOINT, cluster)),
                        350 + 31 * instances));
            }
        }
        return rows;
    }

    private static int size(XdsResource r) {
        return DeltaDiscoveryResponse.newBuilder()
                .setTypeUrl(XdsType.ENDPOINT.typeUrl())
                .setSystemVersionInfo("0123456789abcdef")
                .setNonce("42")
                .addResources(r.delta())
                .build()
                .getSerializedSize();
    }
}
