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
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Method;
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
 * (reusing the unchanged clusters, listeners and routes, as the xDS server does), and the ServiceEntry from scratch
 * and after an endpoint change (reusing what the last translation kept, as the MCP server does).
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
    /** What translating {@code before} kept for the next translation (a package-private {@code Reuse}). */
    private Object previousServiceEntry;

    private final EnvoyTranslator envoy = new EnvoyTranslator();
    private final ServiceEntryTranslator serviceEntries = new ServiceEntryTranslator(McpOptions.defaults());

    @Setup(Level.Trial)
    public void setUp() throws Throwable {
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
        previousServiceEntry = TRANSLATED_REUSE.invoke(TRANSLATE_REUSING.invoke(serviceEntries, before, null));
    }

    /**
     * {@code ServiceEntryTranslator.translate(MeshService, Reuse)} and {@code Translated.reuse()}: the server's
     * package-private incremental path, reached without making it public.
     */
    private static final MethodHandle TRANSLATE_REUSING;

    private static final MethodHandle TRANSLATED_REUSE;

    static {
        try {
            Class<?> reuse = Class.forName(ServiceEntryTranslator.class.getName() + "$Reuse");
            Class<?> translated = Class.forName(ServiceEntryTranslator.class.getName() + "$Translated");
            Method translate = ServiceEntryTranslator.class.getDeclaredMethod("translate", MeshService.class, reuse);
            translate.setAccessible(true);
            Method reuseOf = translated.getDeclaredMethod("reuse");
            reuseOf.setAccessible(true);
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            TRANSLATE_REUSING = lookup.unreflect(translate)
                    .asType(MethodType.methodType(
                            Object.class, ServiceEntryTranslator.class, MeshService.class, Object.class));
            TRANSLATED_REUSE = lookup.unreflect(reuseOf).asType(MethodType.methodType(Object.class, Object.class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
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

    @Benchmark
    public Object serviceEntryEndpointChange() throws Throwable {
        return (Object) TRANSLATE_REUSING.invokeExact(serviceEntries, after, previousServiceEntry);
    }
}
