package dev.meshbridge.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import dev.meshbridge.app.config.BridgeConfig;
import dev.meshbridge.core.config.RegistriesConfig;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.route.HttpRoute;
import dev.meshbridge.core.route.PathRewrite;
import dev.meshbridge.core.route.RegistryDestination;
import dev.meshbridge.core.route.RouteTable;
import dev.meshbridge.ingress.IngressController;
import dev.meshbridge.samples.testing.DemoFiles;
import io.envoyproxy.envoy.config.bootstrap.v3.Bootstrap;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.ApiConfigSource;
import io.envoyproxy.envoy.config.core.v3.SocketAddress;
import io.envoyproxy.envoy.extensions.filters.http.router.v3.Router;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.upstreams.http.v3.HttpProtocolOptions;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * Every file of the docker-compose demo ({@code docker-compose/}), checked here where no Docker engine runs: the compose
 * file and what it names (build contexts, Dockerfiles and their stages and sources, mounted files, dependencies and
 * health checks), the bridge's configuration through the bridge's own validation as the container sees it, the
 * Ingress files through the real directory source, and Envoy's bootstrap as Envoy's v3 {@code Bootstrap} message.
 */
class DockerComposeDemoTest {

    private static final DemoFiles DEMO = DemoFiles.locate();
    private static final Pattern FROM = Pattern.compile("(?i)^FROM\\s+(\\S+)(?:\\s+AS\\s+(\\S+))?\\s*$");
    private static final Pattern COPY = Pattern.compile("(?i)^COPY\\s+(.*)$");
    private static final Pattern MAVEN_PROJECTS = Pattern.compile("-pl\\s+(\\S+)");

    /** The routes the demo's README and smoke script promise, and the registry service behind each. */
    private static final Map<String, String> ROUTES = Map.of(
            "/dubbo", "greeter-zk.dubbo",
            "/nacos", "greeter-nacos.dubbo",
            "/eureka", "hello.eureka",
            "/consul", "hello.dc1.consul",
            "/greeter", "dev.meshbridge.samples.dubbo.greeter.dubbo");

    @Test
    void composeFile_namesBuildContextsDockerfilesStagesAndMountsThatExist() throws IOException {
        Map<String, Map<String, Object>> services = services();
        assertThat(services)
                .containsKeys(
                        "zookeeper",
                        "nacos",
                        "consul",
                        "eureka",
                        "bridge",
                        "envoy",
                        "dubbo-zookeeper",
                        "dubbo-nacos",
                        "hello-eureka",
                        "hello-consul");
        for (var e : services.entrySet()) {
            String name = e.getKey();
            Map<String, Object> svc = e.getValue();
            assertThat(svc.containsKey("image") || svc.containsKey("build"))
                    .as(name + ": image or build")
                    .isTrue();
            Dockerfile dockerfile = dockerfile(name, svc);
            if (dockerfile != null) dockerfile.assertBuildable(name);
            for (Path source : bindSources(svc).values()) {
                assertThat(source).as(name + ": mounted file").exists();
            }
            for (var dep : dependsOn(svc).entrySet()) {
                assertThat(services).as(name + ": depends_on").containsKey(dep.getKey());
                if ("service_healthy".equals(dep.getValue())) {
                    Map<String, Object> target = services.get(dep.getKey());
                    Dockerfile targetImage = dockerfile(dep.getKey(), target);
                    assertThat(target.containsKey("healthcheck")
                                    || (targetImage != null && targetImage.hasHealthcheck()))
                            .as(name + " waits for " + dep.getKey() + " to be healthy, which has no health check")
                            .isTrue();
                }
            }
        }
    }

    @Test
    void bridgeConfig_asTheContainerSeesIt_passesTheBridgesValidation() throws Exception {
        BridgeConfig config = bridgeConfig();

        assertThat(config.registries())
                .extracting(RegistryConfig::type)
                .containsExactlyInAnyOrder("zookeeper", "nacos", "consul", "eureka");
        Set<String> services = services().keySet();
        for (RegistryConfig r : config.registries()) {
            for (String address : r.addresses()) {
                assertThat(services).as(r.name() + " address " + address).contains(host(address));
            }
        }
        assertThat(config.admin().address()).isEqualTo("0.0.0.0");
        assertThat(config.mcp().enabled()).isTrue();
        assertThat(publishedPorts("bridge"))
                .contains(
                        config.admin().port(), config.xds().port(), config.mcp().port());
        assertThat(config.ingress().directory().enabled()).isTrue();
    }

    @Test
    void ingressFiles_passTheDirectorySource_andRouteEachPathToItsSample() throws Exception {
        BridgeConfig config = bridgeConfig();
        try (IngressController ingress = new IngressController(
                config.ingress(), null, new SimpleMeterRegistry(), Map.of(), registries -> {}, () -> false)) {
            ingress.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> ingress.routes().synced());
            assertThat(ingress.refusedFiles()).isEmpty();
            assertThat(ingress.issues().issues()).isEmpty();
            RouteTable table = ingress.routes().current();
            Map<String, String> routes = new TreeMap<>();
            for (HttpRoute r : table.servedRoutes()) {
                assertThat(r.destinations()).hasSize(1);
                // the samples serve /hello: /eureka/hello must reach them as /hello
                assertThat(r.rewrite()).as(r.match() + " rewrite").contains(PathRewrite.prefix("/"));
                routes.put(
                        r.match().path(),
                        ((RegistryDestination) r.destinations().get(0).destination()).host());
            }
            assertThat(routes).isEqualTo(new TreeMap<>(ROUTES));
        }
    }

    @Test
    void envoyBootstrap_isAnEnvoyV3Bootstrap_takingEverythingFromTheBridgeOverAds() throws Exception {
        Bootstrap bootstrap = envoyBootstrap();
        BridgeConfig config = bridgeConfig();

        ApiConfigSource ads = bootstrap.getDynamicResources().getAdsConfig();
        assertThat(ads.getApiType()).isIn(ApiConfigSource.ApiType.GRPC, ApiConfigSource.ApiType.DELTA_GRPC);
        assertThat(ads.getGrpcServices(0).getEnvoyGrpc().getClusterName()).isEqualTo("meshbridge");
        assertThat(bootstrap.getDynamicResources().getLdsConfig().hasAds()).isTrue();
        assertThat(bootstrap.getDynamicResources().getCdsConfig().hasAds()).isTrue();
        assertThat(bootstrap.getStaticResources().getListenersList())
                .as("listeners come from the bridge")
                .isEmpty();

        assertThat(bootstrap.getStaticResources().getClustersList()).hasSize(1);
        Cluster bridge = bootstrap.getStaticResources().getClusters(0);
        assertThat(bridge.getName()).isEqualTo("meshbridge");
        SocketAddress address = bridgeAddress(bootstrap);
        assertThat(address.getAddress()).isEqualTo("bridge");
        assertThat(services()).containsKey(address.getAddress());
        assertThat(address.getPortValue()).isEqualTo(config.xds().port());
        HttpProtocolOptions h2 = bridge.getTypedExtensionProtocolOptionsOrThrow(
                        "envoy.extensions.upstreams.http.v3.HttpProtocolOptions")
                .unpack(HttpProtocolOptions.class);
        assertThat(h2.getExplicitHttpConfig().hasHttp2ProtocolOptions())
                .as("gRPC needs HTTP/2")
                .isTrue();

        int admin = bootstrap.getAdmin().getAddress().getSocketAddress().getPortValue();
        // the HTTP listener the bridge serves Envoy for the Ingress routes is the port compose publishes
        assertThat(config.xds().ingress().enabled()).isTrue();
        assertThat(publishedPorts("envoy"))
                .contains(admin, config.xds().ingress().httpPort());
    }

    /** The egress Envoy is a sidecar: no listener of its own, the bridge's outbound listeners on published ports. */
    @Test
    void egressEnvoy_isASidecar_whoseOutboundListenersComeFromTheBridge() throws Exception {
        Bootstrap bootstrap = envoyBootstrap("envoy-egress");
        BridgeConfig config = bridgeConfig();

        assertThat(config.xds().nodeRoles().role(bootstrap.getNode()))
                .as("the bridge sends outbound listeners to sidecars only")
                .isEqualTo(dev.meshbridge.xds.NodeRoles.SIDECAR);
        assertThat(envoyBootstrap("envoy").getNode())
                .satisfies(n ->
                        assertThat(config.xds().nodeRoles().role(n)).isEqualTo(dev.meshbridge.xds.NodeRoles.GATEWAY));
        assertThat(bootstrap.getStaticResources().getListenersList())
                .as("listeners come from the bridge")
                .isEmpty();
        assertThat(bootstrap.getDynamicResources().getLdsConfig().hasAds()).isTrue();
        assertThat(bootstrap.getDynamicResources().getCdsConfig().hasAds()).isTrue();
        SocketAddress address = bridgeAddress(bootstrap);
        assertThat(address.getAddress()).isEqualTo("bridge");
        assertThat(address.getPortValue()).isEqualTo(config.xds().port());

        var sidecar = config.xds().sidecar();
        assertThat(sidecar.enabled()).isTrue();
        assertThat(publishedPorts("envoy-egress"))
                .contains(
                        sidecar.httpPort(),
                        sidecar.dubboPort(),
                        bootstrap.getAdmin().getAddress().getSocketAddress().getPortValue());
        // the smoke script calls services by name through it
        String script = Files.readString(DEMO.dir().resolve("smoke.sh"));
        assertThat(script).contains("127.0.0.1:" + sidecar.httpPort()).contains("hello.eureka", "greeter-zk.dubbo");
    }

    @Test
    void smokeScript_isExecutable_andCallsEveryRoute() throws IOException {
        Path smoke = DEMO.dir().resolve("smoke.sh");
        assertThat(smoke).isExecutable();
        String script = Files.readString(smoke);
        for (String path : ROUTES.keySet()) assertThat(script).contains(path);
    }

    // ---- reading the files --------------------------------------------------------------------------------------

    @SuppressWarnings("unchecked")
    private static Map<String, Map<String, Object>> services() {
        return (Map<String, Map<String, Object>>) DEMO.compose().get("services");
    }

    /**
     * The bridge's configuration file, read as the container reads it: the file mounted where the command's {@code
     * --config} points, every container path in it that lies under a mount replaced by the mounted host path.
     */
    private static BridgeConfig bridgeConfig() throws Exception {
        Map<String, Object> bridge = services().get("bridge");
        List<?> command = (List<?>) bridge.get("command");
        String containerPath = String.valueOf(command.get(command.indexOf("--config") + 1));
        Map<String, Path> mounts = bindSources(bridge);
        Path file = hostPath(mounts, containerPath);
        assertThat(file)
                .as("--config " + containerPath + " is mounted")
                .isNotNull()
                .exists();
        String yaml = Files.readString(file);
        for (var m : mounts.entrySet())
            yaml = yaml.replace(m.getKey(), m.getValue().toString());
        return BridgeConfig.parse(file.toString(), yaml, RegistriesConfig.loadProviders());
    }

    private static Path hostPath(Map<String, Path> mounts, String containerPath) {
        for (var m : mounts.entrySet()) {
            if (containerPath.equals(m.getKey())) return m.getValue();
            if (containerPath.startsWith(m.getKey() + "/"))
                return m.getValue().resolve(containerPath.substring(m.getKey().length() + 1));
        }
        return null;
    }

    /** The service's bind mounts, container path to host path (short and long syntax). */
    private static Map<String, Path> bindSources(Map<String, Object> svc) {
        Map<String, Path> out = new LinkedHashMap<>();
        Object volumes = svc.get("volumes");
        if (!(volumes instanceof List<?> list)) return out;
        for (Object v : list) {
            if (v instanceof String s) {
                String[] parts = s.split(":");
                if (parts.length >= 2 && (parts[0].startsWith(".") || parts[0].startsWith("/")))
                    out.put(parts[1], DEMO.dir().resolve(parts[0]).normalize());
            } else if (v instanceof Map<?, ?> m && "bind".equals(m.get("type"))) {
                out.put(
                        String.valueOf(m.get("target")),
                        DEMO.dir().resolve(String.valueOf(m.get("source"))).normalize());
            }
        }
        return out;
    }

    /** {@code depends_on} as service to condition ({@code service_started} for the list form). */
    private static Map<String, String> dependsOn(Map<String, Object> svc) {
        Map<String, String> out = new LinkedHashMap<>();
        Object deps = svc.get("depends_on");
        if (deps instanceof List<?> list) {
            list.forEach(d -> out.put(String.valueOf(d), "service_started"));
        } else if (deps instanceof Map<?, ?> map) {
            map.forEach((k, v) -> out.put(
                    String.valueOf(k),
                    v instanceof Map<?, ?> c ? String.valueOf(c.get("condition")) : "service_started"));
        }
        return out;
    }

    /** The container ports a service publishes on the host. */
    private static List<Integer> publishedPorts(String service) {
        List<Integer> out = new ArrayList<>();
        Object ports = services().get(service).get("ports");
        if (ports instanceof List<?> list) {
            for (Object p : list) {
                String s = String.valueOf(p);
                out.add(Integer.parseInt(s.substring(s.lastIndexOf(':') + 1).replace("/tcp", "")));
            }
        }
        return out;
    }

    private static String host(String address) {
        String s = address.contains("://") ? address.substring(address.indexOf("://") + 3) : address;
        return s.split("[:/]")[0];
    }

    /** Where a bootstrap's one static cluster, the bridge, is. */
    private static SocketAddress bridgeAddress(Bootstrap bootstrap) {
        return bootstrap
                .getStaticResources()
                .getClusters(0)
                .getLoadAssignment()
                .getEndpoints(0)
                .getLbEndpoints(0)
                .getEndpoint()
                .getAddress()
                .getSocketAddress();
    }

    private static Bootstrap envoyBootstrap() throws IOException {
        return envoyBootstrap("envoy");
    }

    private static Bootstrap envoyBootstrap(String service) throws IOException {
        Map<String, Object> envoy = services().get(service);
        assertThat(envoy).as("compose service " + service).isNotNull();
        Path file = bindSources(envoy).get("/etc/envoy/envoy.yaml");
        assertThat(file)
                .as("the envoy image reads /etc/envoy/envoy.yaml")
                .isNotNull()
                .exists();
        Object yaml = new Yaml(new SafeConstructor(new LoaderOptions())).load(Files.readString(file));
        String json = new ObjectMapper().writeValueAsString(yaml);
        JsonFormat.TypeRegistry types = JsonFormat.TypeRegistry.newBuilder()
                .add(HttpProtocolOptions.getDescriptor())
                .add(HttpConnectionManager.getDescriptor())
                .add(Router.getDescriptor())
                .build();
        Bootstrap.Builder builder = Bootstrap.newBuilder();
        try {
            JsonFormat.parser().usingTypeRegistry(types).merge(json, builder);
        } catch (InvalidProtocolBufferException e) {
            throw new AssertionError(file + " is not a valid Envoy v3 bootstrap: " + e.getMessage(), e);
        }
        return builder.build();
    }

    // ---- Dockerfiles ---------------------------------------------------------------------------------------------

    /** The Dockerfile a service builds from, or null when it runs a published image. */
    private static Dockerfile dockerfile(String name, Map<String, Object> svc) {
        Object build = svc.get("build");
        if (build == null) return null;
        String context = build instanceof Map<?, ?> m ? String.valueOf(m.get("context")) : String.valueOf(build);
        Object file = build instanceof Map<?, ?> m ? m.get("dockerfile") : null;
        Object target = build instanceof Map<?, ?> m ? m.get("target") : null;
        Path contextDir = DEMO.dir().resolve(context).normalize();
        assertThat(contextDir).as(name + ": build context").isDirectory();
        Path path = contextDir.resolve(file == null ? "Dockerfile" : String.valueOf(file));
        assertThat(path).as(name + ": Dockerfile").isRegularFile();
        return new Dockerfile(contextDir, path, target == null ? null : String.valueOf(target));
    }

    /** One Dockerfile as a service uses it: its build context and, optionally, the stage it stops at. */
    private record Dockerfile(Path context, Path path, String target) {

        /** Instructions with continuation lines joined and comments dropped. */
        List<String> instructions() throws IOException {
            List<String> out = new ArrayList<>();
            StringBuilder current = new StringBuilder();
            for (String line : Files.readAllLines(path)) {
                String t = line.strip();
                if (t.startsWith("#") || (t.isEmpty() && current.isEmpty())) continue;
                if (t.endsWith("\\")) {
                    current.append(t, 0, t.length() - 1).append(' ');
                    continue;
                }
                out.add(current.append(t).toString().strip());
                current.setLength(0);
            }
            return out;
        }

        /** The stages in order, each with its instructions. */
        Map<String, List<String>> stages() throws IOException {
            Map<String, List<String>> stages = new LinkedHashMap<>();
            List<String> current = null;
            int unnamed = 0;
            for (String i : instructions()) {
                Matcher from = FROM.matcher(i);
                if (from.matches()) {
                    current = new ArrayList<>();
                    stages.put(from.group(2) != null ? from.group(2) : "#" + unnamed++, current);
                }
                if (current != null) current.add(i);
            }
            return stages;
        }

        /** The stages the target (or the last stage) is built from: itself and the stages it starts FROM. */
        List<String> built() throws IOException {
            Map<String, List<String>> stages = stages();
            List<String> names = new ArrayList<>(stages.keySet());
            String name = target != null ? target : names.get(names.size() - 1);
            List<String> chain = new ArrayList<>();
            while (name != null && stages.containsKey(name)) {
                chain.add(0, name);
                Matcher from = FROM.matcher(stages.get(name).get(0));
                name = from.matches() ? from.group(1) : null;
            }
            return chain;
        }

        boolean hasHealthcheck() throws IOException {
            Map<String, List<String>> stages = stages();
            for (String stage : built()) {
                if (stages.get(stage).stream().anyMatch(i -> i.toUpperCase().startsWith("HEALTHCHECK"))) return true;
            }
            return false;
        }

        void assertBuildable(String service) throws IOException {
            Map<String, List<String>> stages = stages();
            assertThat(stages)
                    .as(service + ": " + path.getFileName() + " has stages")
                    .isNotEmpty();
            if (target != null)
                assertThat(stages).as(service + ": build target").containsKey(target);
            assertThat(Files.exists(path.resolveSibling(path.getFileName() + ".dockerignore")))
                    .as(path.getFileName() + " has its own .dockerignore (the context is the whole repository)")
                    .isTrue();
            List<String> seen = new ArrayList<>();
            for (var stage : stages.entrySet()) {
                for (String i : stage.getValue()) {
                    Matcher copy = COPY.matcher(i);
                    if (copy.matches()) assertCopySources(service, copy.group(1), seen);
                    Matcher maven = MAVEN_PROJECTS.matcher(i);
                    if (i.contains("mvnw") && maven.find()) {
                        for (String module : maven.group(1).split(",")) {
                            assertThat(context.resolve(module).resolve("pom.xml"))
                                    .as(service + ": Maven project " + module)
                                    .isRegularFile();
                        }
                    }
                }
                seen.add(stage.getKey());
            }
        }

        private void assertCopySources(String service, String args, List<String> earlierStages) {
            List<String> words = List.of(args.trim().split("\\s+"));
            String from = words.stream()
                    .filter(w -> w.startsWith("--from="))
                    .map(w -> w.substring(7))
                    .findFirst()
                    .orElse(null);
            List<String> paths = words.stream().filter(w -> !w.startsWith("--")).collect(Collectors.toList());
            List<String> sources = paths.subList(0, paths.size() - 1);
            if (from != null) {
                assertThat(earlierStages).as(service + ": COPY --from=" + from).contains(from);
                return;
            }
            for (String s : sources) {
                assertThat(context.resolve(s))
                        .as(service + ": COPY source " + s)
                        .exists();
            }
        }
    }
}
