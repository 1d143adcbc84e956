package dev.meshbridge.bench.jmh;

import dev.meshbridge.bench.load.SyntheticCatalog;
import dev.meshbridge.core.aggregate.ServiceAggregator;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.MeshSnapshot;
import dev.meshbridge.mcp.McpOptions;
import dev.meshbridge.mcp.ServiceEntryTranslator;
import dev.meshbridge.mcp.ServiceTranslation;
import dev.meshbridge.xds.EnvoyTranslator;
import dev.meshbridge.xds.ServiceResources;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The translators on one service of the load (a Dubbo application with {@code dubbo} and {@code tri} ports and
 * {@code instances} labelled endpoints): Envoy resources from scratch, Envoy resources after an endpoint change
 * (reusing the unchanged clusters, listeners and routes, as the xDS server does), and the ServiceEntry.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class TranslatorBenchmark {

    @Param("10")
    public int instances;

    private MeshService before;
    private MeshService after;
    private ServiceResources previous;
    private final EnvoyTranslator envoy = new EnvoyTranslator();
    private final ServiceEntryTranslator serviceEntries = new ServiceEntryTranslator(McpOptions.defaults());

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        SyntheticCatalog catalog = new SyntheticCatalog(3, instances);
        try (ServiceAggregator a = new ServiceAggregator(ServiceAggregator.Options.DEFAULTS)) {
            a.accept(catalog.upsert(1));
            MeshSnapshot s0 = a.flushNow().get();
            before = s0.service(catalog.host(1));
            int[] changed = new int[instances];
            changed[0] = 7;
            a.accept(catalog.upsert(1, changed));
            after = a.flushNow().get().service(catalog.host(1));
        }
        previous = envoy.translate(before);
    }

    @Benchmark
    public ServiceResources envoyWholeService() {
        return envoy.translate(after);
    }

    @Benchmark
    public ServiceResources envoyEndpointChange() {
        return envoy.translate(after, previous);
    }

    @Benchmark
    public ServiceTranslation serviceEntry() {
        return serviceEntries.translate(after);
    }
}
