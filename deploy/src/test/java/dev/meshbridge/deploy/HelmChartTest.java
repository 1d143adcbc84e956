package dev.meshbridge.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.marcnuri.helm.LintResult;
import dev.meshbridge.app.config.BridgeConfig;
import dev.meshbridge.core.config.ConfigException;
import dev.meshbridge.core.config.RegistriesConfig;
import dev.meshbridge.core.spi.RegistryWatcherProvider;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HTTPGetAction;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraint;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The Helm chart, rendered by Helm itself for every documented value set and checked object by object in fabric8's
 * typed model: what a platform team's cluster would be given.
 */
class HelmChartTest {

    static final Map<String, RegistryWatcherProvider> PROVIDERS = RegistriesConfig.loadProviders();
    static final Path RESOURCES = Path.of("src/test/resources").toAbsolutePath();

    /** The value sets the chart documents, and one with every optional part on. */
    static Stream<Arguments> valueSets() {
        return Stream.of(
                Arguments.of("defaults", List.of()),
                Arguments.of("defaults + one registry", List.of(RESOURCES.resolve("values-zookeeper.yaml"))),
                Arguments.of("Istio with MCP", List.of(Chart.EXAMPLES.resolve("istio-mcp.yaml"))),
                Arguments.of("Envoy fleet", List.of(Chart.EXAMPLES.resolve("envoy-fleet.yaml"))),
                Arguments.of("everything on", List.of(RESOURCES.resolve("values-everything.yaml"))));
    }

    static Chart.Rendered render(List<Path> files) {
        return Chart.parse(Chart.template(files.toArray(Path[]::new)));
    }

    @Test
    void helmLint_strict_passes() {
        LintResult lint = Chart.lint();
        assertThat(lint.isFailed())
                .as("helm lint --strict: %s", lint.getMessages())
                .isFalse();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("valueSets")
    void configMap_holdsABridgeYamlTheBridgeAccepts(String name, List<Path> files) throws Exception {
        Chart.Rendered r = render(files);
        String yaml = r.one(ConfigMap.class).getData().get("bridge.yaml");
        Container c = container(r);
        BridgeConfig config = checkAsThePodWould(r, c, "ConfigMap bridge.yaml (" + name + ")", yaml);
        assertThat(config.admin().port()).isEqualTo(portNamed(c, "http-admin").getContainerPort());
        assertThat(config.admin().address()).as("probes reach the admin server").isEqualTo("0.0.0.0");
        assertThat(config.xds().port()).isEqualTo(portNamed(c, "grpc-xds").getContainerPort());
        if (config.mcp().enabled()) {
            assertThat(config.mcp().port()).isEqualTo(portNamed(c, "grpc-mcp").getContainerPort());
        } else {
            assertThat(c.getPorts()).extracting(ContainerPort::getName).doesNotContain("grpc-mcp");
        }
        // the data directory is the data volume; the file read is the one mounted
        assertThat(mountPathOf(c, "data")).isEqualTo(config.data().directory().toString());
        assertThat(c.getArgs()).containsExactly("--config", mountPathOf(c, "config") + "/bridge.yaml");
        // the pod lives longer than the drain
        PodSpec pod = r.podTemplate().getSpec();
        assertThat(config.shutdown().drainPeriod())
                .isLessThan(Duration.ofSeconds(pod.getTerminationGracePeriodSeconds() - 4));
    }

    private static final java.util.regex.Pattern MISSING_ENV =
            java.util.regex.Pattern.compile("environment variable (\\S+) is not set");
    private static final java.util.regex.Pattern MISSING_FILE =
            java.util.regex.Pattern.compile("secret file (\\S+) does not exist or is not readable");

    /**
     * The bridge's own validation ({@code meshbridge --check}) of the ConfigMap's bridge.yaml, as inside the pod: a
     * credential read from an environment variable or a file is accepted when the pod defines that variable or mounts a
     * Secret at a folder holding that file (they exist there, not in this JVM); every other problem fails.
     */
    static BridgeConfig checkAsThePodWould(Chart.Rendered r, Container c, String source, String yaml) {
        try {
            return BridgeConfig.parse(source, yaml, PROVIDERS);
        } catch (ConfigException e) {
            Set<String> env = c.getEnv() == null
                    ? Set.of()
                    : c.getEnv().stream().map(v -> v.getName()).collect(Collectors.toSet());
            Set<String> secretVolumes = r.podTemplate().getSpec().getVolumes().stream()
                    .filter(v -> v.getSecret() != null)
                    .map(Volume::getName)
                    .collect(Collectors.toSet());
            List<String> secretMounts = c.getVolumeMounts().stream()
                    .filter(m -> secretVolumes.contains(m.getName()))
                    .map(m -> m.getMountPath() + "/")
                    .toList();
            List<String> real = e.problems().stream()
                    .filter(p -> {
                        java.util.regex.Matcher m = MISSING_ENV.matcher(p.message());
                        if (m.find()) return !env.contains(m.group(1));
                        m = MISSING_FILE.matcher(p.message());
                        if (m.find()) return secretMounts.stream().noneMatch(m.group(1)::startsWith);
                        return true;
                    })
                    .map(Object::toString)
                    .toList();
            assertThat(real)
                    .as("what the bridge refuses in the chart's bridge.yaml:%n%s", yaml)
                    .isEmpty();
            // only credentials the pod provides were missing here: check the rest with them present
            String provided = yaml;
            for (var p : e.problems()) {
                java.util.regex.Matcher m = MISSING_ENV.matcher(p.message());
                if (m.find()) provided = provided.replace("env: " + m.group(1), "env: PATH"); // set in every JVM
                m = MISSING_FILE.matcher(p.message());
                if (m.find()) provided = provided.replace("file: " + m.group(1), "env: PATH");
            }
            try {
                return BridgeConfig.parse(source, provided, PROVIDERS);
            } catch (ConfigException again) {
                throw new AssertionError(again.problems().toString(), again);
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("valueSets")
    void portsProbesAndLabels_lineUpBetweenWorkloadServiceAndDisruptionBudget(String name, List<Path> files) {
        Chart.Rendered r = render(files);
        Map<String, String> podLabels = r.podTemplate().getMetadata().getLabels();
        assertThat(podLabels).containsAllEntriesOf(r.workloadSelector());
        Container c = container(r);
        Set<String> containerPorts =
                c.getPorts().stream().map(ContainerPort::getName).collect(Collectors.toSet());

        Service service = r.one(Service.class);
        assertThat(podLabels)
                .as("the Service selects the pods")
                .containsAllEntriesOf(service.getSpec().getSelector());
        for (ServicePort p : service.getSpec().getPorts()) {
            assertThat(containerPorts)
                    .as("Service port %s targets a container port", p.getName())
                    .contains(p.getTargetPort().getStrVal());
            assertThat(p.getName())
                    .as("Istio's protocol selection by port name")
                    .matches("(grpc|http)-.+");
            assertThat(p.getAppProtocol())
                    .isEqualTo(p.getName().substring(0, p.getName().indexOf('-')));
            assertThat(p.getPort()).isEqualTo(portNamed(c, p.getName()).getContainerPort());
        }
        assertThat(service.getSpec().getPorts())
                .extracting(ServicePort::getName)
                .containsAll(containerPorts);

        HTTPGetAction ready = c.getReadinessProbe().getHttpGet();
        HTTPGetAction live = c.getLivenessProbe().getHttpGet();
        assertThat(ready.getPath()).isEqualTo("/ready");
        assertThat(live.getPath()).isEqualTo("/healthz");
        assertThat(c.getStartupProbe().getHttpGet().getPath()).isEqualTo("/healthz");
        assertThat(Stream.of(ready, live, c.getStartupProbe().getHttpGet()))
                .allSatisfy(g -> assertThat(g.getPort().getStrVal()).isEqualTo("http-admin"));

        PodDisruptionBudget pdb = r.one(PodDisruptionBudget.class);
        assertThat(podLabels)
                .as("the PodDisruptionBudget selects the pods")
                .containsAllEntriesOf(pdb.getSpec().getSelector().getMatchLabels());
        assertThat(pdb.getSpec().getMaxUnavailable().getIntVal()).isEqualTo(1);
        List<TopologySpreadConstraint> spread = r.podTemplate().getSpec().getTopologySpreadConstraints();
        assertThat(spread)
                .extracting(TopologySpreadConstraint::getTopologyKey)
                .containsExactly("topology.kubernetes.io/zone", "kubernetes.io/hostname");
        assertThat(spread)
                .allSatisfy(t -> assertThat(podLabels)
                        .containsAllEntriesOf(t.getLabelSelector().getMatchLabels()));
        for (HasMetadata o : r.objects()) {
            assertThat(o.getMetadata().getLabels())
                    .as("%s %s labels", o.getKind(), o.getMetadata().getName())
                    .containsEntry("app.kubernetes.io/name", "meshbridge")
                    .containsEntry("app.kubernetes.io/instance", "meshbridge");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("valueSets")
    void pod_runsNonRoot_readOnlyRoot_noPrivilegeEscalation_seccompRuntimeDefault(String name, List<Path> files) {
        Chart.Rendered r = render(files);
        PodSpec pod = r.podTemplate().getSpec();
        assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
        assertThat(pod.getSecurityContext().getRunAsUser()).isPositive();
        assertThat(pod.getSecurityContext().getSeccompProfile().getType()).isEqualTo("RuntimeDefault");
        Container c = container(r);
        assertThat(c.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
        assertThat(c.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
        assertThat(c.getSecurityContext().getRunAsNonRoot()).isTrue();
        assertThat(c.getSecurityContext().getCapabilities().getDrop()).containsExactly("ALL");
        // what the JVM and the bridge write goes to volumes: the data directory and /tmp
        assertThat(c.getVolumeMounts())
                .filteredOn(m -> !Boolean.TRUE.equals(m.getReadOnly()))
                .extracting(VolumeMount::getMountPath)
                .containsExactlyInAnyOrder("/var/lib/meshbridge", "/tmp");
        assertThat(c.getResources().getLimits()).containsKey("memory");
    }

    @Test
    void rbac_onlyWhenAKubernetesSourceIsOn_andExactlyWhatTheIngressModuleUses() throws Exception {
        Chart.Rendered defaults = render(List.of(RESOURCES.resolve("values-zookeeper.yaml")));
        assertThat(defaults.all(ClusterRole.class)).isEmpty();
        assertThat(defaults.all(Role.class)).isEmpty();
        assertThat(defaults.all(ClusterRoleBinding.class)).isEmpty();
        assertThat(defaults.one(ServiceAccount.class).getAutomountServiceAccountToken())
                .isFalse();
        assertThat(defaults.podTemplate().getSpec().getAutomountServiceAccountToken())
                .isFalse();

        // cluster-wide Ingresses and the McpBridge: the ingress module's own ClusterRole (RbacManifestTest proves it
        // exact), bound to the chart's ServiceAccount
        Chart.Rendered all = render(List.of(RESOURCES.resolve("values-everything.yaml")));
        ClusterRole role = all.one(ClusterRole.class);
        ClusterRole expected = Chart.parse(Files.readString(Chart.ROOT.resolve("ingress/deploy/rbac.yaml")))
                .one(ClusterRole.class);
        assertThat(rules(role)).isEqualTo(rules(expected));
        ClusterRoleBinding binding = all.one(ClusterRoleBinding.class);
        assertThat(binding.getRoleRef().getName()).isEqualTo(role.getMetadata().getName());
        assertThat(binding.getSubjects()).singleElement().satisfies(s -> {
            assertThat(s.getName())
                    .isEqualTo(all.one(ServiceAccount.class).getMetadata().getName());
            assertThat(s.getNamespace()).isEqualTo("meshbridge");
        });
        assertThat(all.podTemplate().getSpec().getAutomountServiceAccountToken())
                .isTrue();

        // Ingresses of two namespaces: a Role in each, IngressClasses cluster-wide, no McpBridge rule
        Chart.Rendered fleet = render(List.of(Chart.EXAMPLES.resolve("envoy-fleet.yaml")));
        assertThat(fleet.all(Role.class))
                .extracting(x -> x.getMetadata().getNamespace())
                .containsExactlyInAnyOrder("shop", "web");
        assertThat(fleet.all(RoleBinding.class)).hasSize(2);
        assertThat(rules(fleet.one(ClusterRole.class))).containsExactly("networking.k8s.io/ingressclasses:list,watch");
        assertThat(fleet.all(Role.class))
                .allSatisfy(x -> assertThat(rules(x)).doesNotContain("networking.higress.io/mcpbridges:list,watch"));
    }

    @Test
    void credentialSecrets_getOnExactlyTheNamedSecrets_inTheirNamespaces() {
        Chart.Rendered defaults = render(List.of(RESOURCES.resolve("values-zookeeper.yaml")));
        assertThat(defaults.all(Role.class)).isEmpty();

        Chart.Rendered all = render(List.of(RESOURCES.resolve("values-everything.yaml")));
        List<Role> roles = all.all(Role.class).stream()
                .filter(r -> r.getMetadata().getName().endsWith("-credentials"))
                .toList();
        assertThat(roles)
                .extracting(r -> r.getMetadata().getNamespace())
                .containsExactlyInAnyOrder("meshbridge", "higress-system");
        for (Role r : roles) {
            assertThat(r.getRules()).singleElement().satisfies(rule -> {
                assertThat(rule.getResources()).containsExactly("secrets");
                assertThat(rule.getVerbs()).containsExactly("get");
                assertThat(rule.getResourceNames())
                        .containsExactly(
                                r.getMetadata().getNamespace().equals("meshbridge")
                                        ? "consul-acl"
                                        : "higress-nacos-auth");
            });
        }
        assertThat(all.all(RoleBinding.class).stream()
                        .filter(b -> b.getMetadata().getName().endsWith("-credentials")))
                .hasSize(2)
                .allSatisfy(b -> {
                    assertThat(b.getRoleRef().getKind()).isEqualTo("Role");
                    assertThat(b.getSubjects())
                            .singleElement()
                            .satisfies(s -> assertThat(s.getNamespace()).isEqualTo("meshbridge"));
                });
    }

    private static Set<String> rules(HasMetadata role) {
        List<PolicyRule> rules = role instanceof ClusterRole c ? c.getRules() : ((Role) role).getRules();
        Set<String> out = new java.util.TreeSet<>();
        for (PolicyRule r : rules) {
            for (String g : r.getApiGroups()) {
                for (String res : r.getResources()) {
                    out.add((g.isEmpty() ? "" : g + "/") + res + ":" + String.join(",", r.getVerbs()));
                }
            }
        }
        return out;
    }

    @Test
    void optionalParts_serviceMonitorNetworkPolicyTlsAndPersistence_lineUpWithThePod() {
        Chart.Rendered r = render(List.of(RESOURCES.resolve("values-everything.yaml")));
        Container c = container(r);
        Set<String> containerPorts =
                c.getPorts().stream().map(ContainerPort::getName).collect(Collectors.toSet());

        GenericKubernetesResource monitor =
                (GenericKubernetesResource) r.ofKind("ServiceMonitor").get(0);
        assertThat(monitor.getApiVersion()).isEqualTo("monitoring.coreos.com/v1");
        Map<String, Object> endpoint = monitor.get("spec", "endpoints", 0);
        assertThat(endpoint).containsEntry("port", "http-admin").containsEntry("path", "/metrics");
        Map<String, String> monitorSelects = monitor.get("spec", "selector", "matchLabels");
        assertThat(r.one(Service.class).getMetadata().getLabels()).containsAllEntriesOf(monitorSelects);
        assertThat(r.ofKind("PrometheusRule")).hasSize(1);

        NetworkPolicy policy = r.one(NetworkPolicy.class);
        assertThat(r.podTemplate().getMetadata().getLabels())
                .containsAllEntriesOf(policy.getSpec().getPodSelector().getMatchLabels());
        assertThat(policy.getSpec().getIngress())
                .flatExtracting(i -> i.getPorts())
                .extracting(p -> p.getPort().getStrVal())
                .containsExactlyInAnyOrderElementsOf(containerPorts);

        Map<String, Volume> volumes =
                r.podTemplate().getSpec().getVolumes().stream().collect(Collectors.toMap(Volume::getName, v -> v));
        assertThat(volumes.get("tls").getSecret().getSecretName()).isEqualTo("meshbridge-tls");
        assertThat(volumes.get("zk-credentials").getSecret().getSecretName()).isEqualTo("zk-credentials");
        assertThat(mountPathOf(c, "tls")).isEqualTo("/etc/meshbridge/tls");
        assertThat(mountPathOf(c, "zk-credentials")).isEqualTo("/etc/meshbridge/zk");
        assertThat(c.getVolumeMounts())
                .filteredOn(m -> m.getName().equals("tls") || m.getName().equals("zk-credentials"))
                .allSatisfy(m -> assertThat(m.getReadOnly()).isTrue());

        // persistence: a StatefulSet whose every replica claims its own data volume
        StatefulSet set = (StatefulSet) r.workload();
        assertThat(set.getSpec().getVolumeClaimTemplates()).singleElement().satisfies(pvc -> {
            assertThat(pvc.getMetadata().getName()).isEqualTo("data");
            assertThat(pvc.getSpec().getStorageClassName()).isEqualTo("fast");
        });
        assertThat(volumes).doesNotContainKey("data");
        assertThat(c.getEnv()).extracting(e -> e.getName()).contains("JAVA_TOOL_OPTIONS", "EXTRA");
    }

    /** Values the schema or the chart refuses, each with the message Helm prints. */
    static Stream<Arguments> badValues() {
        return Stream.of(
                Arguments.of("replicaCount: 0", "replicaCount"),
                Arguments.of("replicas: 2", "replicas"),
                Arguments.of("image: {repository: x, pullPolicy: Sometimes}", "pullPolicy"),
                Arguments.of("ports: {xds: 70000, mcp: 15051, admin: 15080}", "xds"),
                Arguments.of("bridge: {registries: [{type: etcd, name: e}]}", "type"),
                Arguments.of("bridge: {registries: [{type: nacos, name: Bad_Name}]}", "name"),
                Arguments.of("bridge: {registry: []}", "registry"),
                Arguments.of("securityContext: {allowPrivilegeEscalation: true}", "allowPrivilegeEscalation"),
                Arguments.of("podSecurityContext: {runAsNonRoot: false}", "runAsNonRoot"),
                Arguments.of("prometheusRule: {enabled: true, catalogShrinkPercent: 150}", "catalogShrinkPercent"),
                Arguments.of("drainSeconds: 60\nterminationGracePeriodSeconds: 30", "must exceed drainSeconds"),
                Arguments.of("ports: {xds: 15010, mcp: 15010, admin: 15080}", "must differ"),
                Arguments.of("data: {writeInterval: soon}", "writeInterval"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badValues")
    void badValue_failsHelmTemplate_withAMessageNamingIt(String values, String named) {
        assertThatThrownBy(() -> Chart.templateWith(values)).hasMessageContaining(named);
    }

    @Test
    void aBridgeYamlTheSchemaCannotJudge_isRefusedByTheBridgesOwnCheck_withLineAndField() {
        // the schema checks the chart's shape; the bridge's own validation (meshbridge --check) judges bridge.yaml
        String yaml = Chart.parse(Chart.templateWith("""
                        bridge:
                          registries: [{type: zookeeper, name: zk, addresses: [zk:2181], sessionTimeout: soon}]
                        """))
                .one(ConfigMap.class)
                .getData()
                .get("bridge.yaml");
        assertThatThrownBy(() -> BridgeConfig.parse("bridge.yaml", yaml, PROVIDERS))
                .isInstanceOfSatisfying(
                        ConfigException.class,
                        e -> assertThat(e.problems().toString()).contains("sessionTimeout"));
    }

    static Container container(Chart.Rendered r) {
        return r.podTemplate().getSpec().getContainers().stream()
                .filter(c -> c.getName().equals("meshbridge"))
                .findFirst()
                .orElseThrow();
    }

    static ContainerPort portNamed(Container c, String name) {
        return c.getPorts().stream()
                .filter(p -> p.getName().equals(name))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no container port " + name));
    }

    static String mountPathOf(Container c, String volume) {
        return c.getVolumeMounts().stream()
                .filter(m -> m.getName().equals(volume))
                .map(VolumeMount::getMountPath)
                .findFirst()
                .orElseThrow(() -> new AssertionError("no mount of volume " + volume));
    }
}
