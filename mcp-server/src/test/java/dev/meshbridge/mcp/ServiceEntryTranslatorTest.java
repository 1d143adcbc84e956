package dev.meshbridge.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Health;
import dev.meshbridge.core.model.Locality;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.mcp.McpOptions.EndpointMode;
import dev.meshbridge.mcp.api.networking.v1alpha3.ServiceEntry;
import dev.meshbridge.mcp.api.networking.v1alpha3.WorkloadEntry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class ServiceEntryTranslatorTest {

    static final ServiceKey KEY = new ServiceKey("zookeeper", "zk1", "", "", "demo-provider", "");
    static final ServicePort DUBBO = new ServicePort("dubbo", 20880, Protocol.DUBBO);
    static final ServicePort TRI = new ServicePort("tri", 50051, Protocol.TRIPLE);

    static MeshService service(String host, List<ServicePort> ports, Endpoint... endpoints) {
        List<Endpoint> sorted = new ArrayList<>(List.of(endpoints));
        sorted.sort(null);
        return new MeshService(
                host, ports, sorted, new TreeMap<>(Map.of("app", "demo")), new TreeSet<>(List.of(KEY)), "v-" + sorted);
    }

    static Endpoint.Builder ep(String address) {
        return Endpoint.builder(address).port("dubbo", 20880).port("tri", 50051);
    }

    private static final ServiceEntryTranslator INLINE = new ServiceEntryTranslator(McpOptions.defaults());
    private static final ServiceEntryTranslator WORKLOADS = new ServiceEntryTranslator(
            McpOptions.builder().endpointMode(EndpointMode.WORKLOAD_ENTRY).build());

    static ServiceEntry serviceEntry(McpResource r) throws InvalidProtocolBufferException {
        return r.body().unpack(ServiceEntry.class);
    }

    @Test
    void translate_dubboApplication_portsByNameEndpointsAndMetadata() throws Exception {
        MeshService svc = service(
                "demo-provider.dubbo",
                List.of(DUBBO, TRI),
                ep("10.0.0.21")
                        .label("env", "prod")
                        .locality(new Locality("cn-east", "zone-a", ""))
                        .build(),
                ep("10.0.0.22").weight(300).build());

        ServiceTranslation t = INLINE.translate(svc);

        assertThat(t.served()).isTrue();
        assertThat(t.notes()).isEmpty();
        McpResource r = t.resources().get(0);
        assertThat(r.kind()).isEqualTo(McpKind.SERVICE_ENTRY);
        assertThat(r.fullName()).isEqualTo("meshbridge/demo-provider.dubbo");
        assertThat(r.labels())
                .containsEntry("app", "demo")
                .containsEntry("app.kubernetes.io/managed-by", "meshbridge")
                .containsEntry("meshbridge.dev/registry", "zk1")
                .containsEntry("meshbridge.dev/registry-type", "zookeeper")
                .doesNotContainKey("istio.io/rev");
        ServiceEntry se = serviceEntry(r);
        assertThat(se.getHostsList()).containsExactly("demo-provider.dubbo");
        assertThat(se.getPortsList())
                .extracting(p -> p.getName(), p -> p.getNumber(), p -> p.getProtocol())
                .containsExactly(tuple("dubbo", 20880, "TCP"), tuple("tri", 50051, "GRPC"));
        assertThat(se.getExportToList()).isEmpty();
        assertThat(se.getEndpointsList())
                .extracting(
                        WorkloadEntry::getAddress,
                        WorkloadEntry::getWeight,
                        WorkloadEntry::getLocality,
                        WorkloadEntry::getLabelsMap)
                .containsExactly(
                        tuple("10.0.0.21", 100, "cn-east/zone-a", Map.of("env", "prod")),
                        tuple("10.0.0.22", 300, "", Map.of()));
        assertThat(se.getEndpoints(0).getPortsMap()).containsOnly(Map.entry("dubbo", 20880), Map.entry("tri", 50051));
    }

    @Test
    void translate_instancesOnDifferentPorts_keepTheServicePortAndMapTheirOwn() throws Exception {
        MeshService svc = service(
                "greeter.dubbo",
                List.of(DUBBO),
                Endpoint.builder("10.0.0.1").port("dubbo", 20880).build(),
                Endpoint.builder("10.0.0.2").port("dubbo", 20990).build());

        ServiceEntry se = serviceEntry(INLINE.translate(svc).resources().get(0));

        assertThat(se.getPortsList())
                .singleElement()
                .satisfies(p -> assertThat(p.getNumber()).isEqualTo(20880));
        assertThat(se.getEndpointsList())
                .extracting(e -> e.getPortsMap().get("dubbo"))
                .containsExactly(20880, 20990);
    }

    @Test
    void translate_unhealthyDrainingDisabledAndWeightZero_areLeftOutWithoutNotes() throws Exception {
        MeshService svc = service(
                "demo-provider.dubbo",
                List.of(DUBBO, TRI),
                ep("10.0.0.1").build(),
                ep("10.0.0.2").health(Health.UNHEALTHY).build(),
                ep("10.0.0.3").health(Health.DRAINING).build(),
                ep("10.0.0.4").enabled(false).build(),
                ep("10.0.0.5").weight(0).build());

        ServiceTranslation t = INLINE.translate(svc);

        assertThat(serviceEntry(t.resources().get(0)).getEndpointsList())
                .extracting(WorkloadEntry::getAddress)
                .containsExactly("10.0.0.1");
        assertThat(t.notes()).isEmpty();
    }

    @Test
    void translate_noInstanceLeft_stillServesTheServiceEntry() throws Exception {
        MeshService svc = service(
                "demo-provider.dubbo",
                List.of(DUBBO, TRI),
                ep("10.0.0.2").health(Health.UNHEALTHY).build());

        ServiceTranslation t = INLINE.translate(svc);

        assertThat(t.served()).isTrue();
        assertThat(serviceEntry(t.resources().get(0)).getEndpointsList()).isEmpty();
    }

    @Test
    void translate_hostNameAddressAndUndeclaredPort_areLeftOutAndNoted() throws Exception {
        MeshService svc = service(
                "demo-provider.dubbo",
                List.of(DUBBO),
                Endpoint.builder("10.0.0.1")
                        .port("dubbo", 20880)
                        .port("rest", 8080)
                        .build(),
                Endpoint.builder("provider-2.corp.example").port("dubbo", 20880).build(),
                Endpoint.builder("10.0.0.3").port("rest", 8080).build());

        ServiceTranslation t = INLINE.translate(svc);

        assertThat(t.served()).isTrue();
        ServiceEntry se = serviceEntry(t.resources().get(0));
        assertThat(se.getEndpointsList()).singleElement().satisfies(e -> {
            assertThat(e.getAddress()).isEqualTo("10.0.0.1");
            assertThat(e.getPortsMap()).containsOnly(Map.entry("dubbo", 20880));
        });
        assertThat(t.notes())
                .hasSize(4)
                .anySatisfy(
                        n -> assertThat(n).contains("provider-2.corp.example").contains("not an IP address"))
                .anySatisfy(n -> assertThat(n).contains("10.0.0.3").contains("none of its ports"));
    }

    @Test
    void translate_localityWithAMissingRegion_isLeftOutAndNoted() throws Exception {
        MeshService svc = service(
                "greeter.dubbo",
                List.of(DUBBO),
                Endpoint.builder("10.0.0.1")
                        .port("dubbo", 20880)
                        .locality(new Locality("", "zone-a", ""))
                        .build(),
                Endpoint.builder("10.0.0.2")
                        .port("dubbo", 20880)
                        .locality(new Locality("r", "z", "s"))
                        .build());

        ServiceTranslation t = INLINE.translate(svc);

        assertThat(serviceEntry(t.resources().get(0)).getEndpointsList())
                .extracting(WorkloadEntry::getLocality)
                .containsExactly("", "r/z/s");
        assertThat(t.notes()).singleElement().asString().contains("locality");
    }

    @Test
    void translate_twoPortsWithOneNumber_isRefusedWithTheReason() {
        MeshService svc = service(
                "demo-provider.dubbo",
                List.of(new ServicePort("grpc", 50051, Protocol.GRPC), TRI),
                Endpoint.builder("10.0.0.1")
                        .port("tri", 50051)
                        .port("grpc", 50052)
                        .build());

        ServiceTranslation t = INLINE.translate(svc);

        assertThat(t.served()).isFalse();
        assertThat(t.resources()).isEmpty();
        assertThat(t.problems()).containsExactly("port number 50051 is used twice, by 'grpc' and 'tri'");
    }

    @Test
    void translate_hostEndingInANumber_isRefused() {
        MeshService svc = service("orders.v2", List.of(DUBBO), ep("10.0.0.1").build());
        assertThat(INLINE.translate(svc).served()).isTrue();

        ServiceTranslation t = INLINE.translate(
                service("orders.2", List.of(DUBBO), ep("10.0.0.1").build()));

        assertThat(t.problems()).singleElement().asString().contains("all-numeric");
    }

    @Test
    void translate_isDeterministic_acrossTranslatorsAndRuns() {
        MeshService svc = service(
                "demo-provider.dubbo",
                List.of(DUBBO, TRI),
                ep("10.0.0.21").label("b", "2").label("a", "1").build(),
                ep("10.0.0.22").build());

        McpResource one = INLINE.translate(svc).resources().get(0);
        McpResource two = new ServiceEntryTranslator(McpOptions.defaults())
                .translate(svc)
                .resources()
                .get(0);

        assertThat(two.version()).isEqualTo(one.version());
        assertThat(two.body().getValue()).isEqualTo(one.body().getValue());
    }

    @Test
    void translate_oneInstanceChanges_changesTheServiceEntryVersion_orOneWorkloadEntryInWorkloadEntryMode() {
        MeshService before = service(
                "demo-provider.dubbo",
                List.of(DUBBO, TRI),
                ep("10.0.0.21").build(),
                ep("10.0.0.22").build());
        MeshService after = service(
                "demo-provider.dubbo",
                List.of(DUBBO, TRI),
                ep("10.0.0.21").build(),
                ep("10.0.0.22").weight(10).build());

        assertThat(INLINE.translate(after).resources().get(0).version())
                .isNotEqualTo(INLINE.translate(before).resources().get(0).version());

        Map<String, String> v0 = versions(WORKLOADS.translate(before));
        Map<String, String> v1 = versions(WORKLOADS.translate(after));
        assertThat(v1.keySet()).isEqualTo(v0.keySet());
        assertThat(v1.entrySet())
                .filteredOn(e -> !e.getValue().equals(v0.get(e.getKey())))
                .extracting(Map.Entry::getKey)
                .containsExactly("meshbridge/demo-provider.dubbo.10-0-0-22-20880-50051");
    }

    private static Map<String, String> versions(ServiceTranslation t) {
        Map<String, String> out = new TreeMap<>();
        for (McpResource r : t.resources()) out.put(r.fullName(), r.version());
        return out;
    }

    @Test
    void translate_workloadEntryMode_selectorAndOneWorkloadEntryPerInstance() throws Exception {
        MeshService svc = service(
                "demo-provider.dubbo",
                List.of(DUBBO, TRI),
                ep("10.0.0.21").label("env", "prod").build(),
                ep("fd00::21").build());

        ServiceTranslation t = WORKLOADS.translate(svc);

        assertThat(t.resources())
                .extracting(McpResource::kind, McpResource::fullName)
                .startsWith(
                        tuple(McpKind.SERVICE_ENTRY, "meshbridge/demo-provider.dubbo"),
                        tuple(McpKind.WORKLOAD_ENTRY, "meshbridge/demo-provider.dubbo.10-0-0-21-20880-50051"))
                .hasSize(3);
        assertThat(t.resources().get(2).fullName())
                .startsWith("meshbridge/demo-provider.dubbo.ip6-")
                .endsWith("-20880-50051");
        ServiceEntry se = serviceEntry(t.resources().get(0));
        assertThat(se.getEndpointsList()).isEmpty();
        assertThat(se.getWorkloadSelector().getLabelsMap())
                .containsExactly(Map.entry("meshbridge.dev/service", "demo-provider.dubbo"));
        WorkloadEntry we = t.resources().get(1).body().unpack(WorkloadEntry.class);
        assertThat(we.getLabelsMap())
                .containsOnly(Map.entry("env", "prod"), Map.entry("meshbridge.dev/service", "demo-provider.dubbo"));
        assertThat(t.resources().get(1).labels()).containsEntry("meshbridge.dev/registry", "zk1");
    }

    @Test
    void selectorValue_longName_isCutAndHashed() {
        String name = "a".repeat(60) + ".dubbo";

        String value = ServiceEntryTranslator.selectorValue(name);

        assertThat(value).hasSizeLessThanOrEqualTo(63).startsWith("a".repeat(46) + "-");
        assertThat(ServiceEntryTranslator.selectorValue("b".repeat(60) + ".dubbo"))
                .isNotEqualTo(value);
    }

    @Test
    void workloadName_tooLongForOneName_isHashed() {
        String seName = ("x".repeat(60) + ".").repeat(4) + "dubbo";

        String name = ServiceEntryTranslator.workloadName(seName, ep("10.0.0.1").build());

        assertThat(name).hasSizeLessThanOrEqualTo(253).contains(".ep-");
        assertThat(dev.meshbridge.core.naming.Dns1123.isSubdomain(name)).isTrue();
    }

    @Test
    void translate_options_namespaceRevisionExportToAndNameTemplate() throws Exception {
        ServiceEntryTranslator translator = new ServiceEntryTranslator(McpOptions.builder()
                .namespace("dubbo-mesh")
                .revision("1-24")
                .exportTo(List.of("*"))
                .resourceName("{registryType}.{registry}.{host}")
                .build());

        McpResource r = translator
                .translate(
                        service("greeter.dubbo", List.of(DUBBO), ep("10.0.0.1").build()))
                .resources()
                .get(0);

        assertThat(r.fullName()).isEqualTo("dubbo-mesh/zookeeper.zk1.greeter.dubbo");
        assertThat(r.labels()).containsEntry("istio.io/rev", "1-24");
        assertThat(serviceEntry(r).getExportToList()).containsExactly("*");
    }

    @Test
    void protocols_tripleIsGrpc_dubboIsTcp() {
        assertThat(IstioProtocols.of(Protocol.TRIPLE)).isEqualTo("GRPC");
        assertThat(IstioProtocols.of(Protocol.DUBBO)).isEqualTo("TCP");
        assertThat(IstioProtocols.of(Protocol.HTTP2)).isEqualTo("HTTP2");
        for (Protocol p : Protocol.values())
            assertThat(IstioProtocols.accepted(IstioProtocols.of(p))).isTrue();
    }
}
