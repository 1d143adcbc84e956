package dev.meshbridge.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meshbridge.mcp.api.networking.v1alpha3.ServiceEntry;
import dev.meshbridge.mcp.api.networking.v1alpha3.ServicePort;
import dev.meshbridge.mcp.api.networking.v1alpha3.WorkloadEntry;
import dev.meshbridge.mcp.api.networking.v1alpha3.WorkloadSelector;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class IstioValidationTest {

    static ServiceEntry.Builder valid() {
        return ServiceEntry.newBuilder()
                .addHosts("greeter.dubbo")
                .addPorts(ServicePort.newBuilder()
                        .setNumber(20880)
                        .setName("dubbo")
                        .setProtocol("TCP"))
                .setLocation(ServiceEntry.Location.MESH_INTERNAL)
                .setResolution(ServiceEntry.Resolution.STATIC)
                .addEndpoints(WorkloadEntry.newBuilder()
                        .setAddress("10.0.0.1")
                        .putPorts("dubbo", 20880)
                        .putLabels("version", "1.0.0")
                        .setLocality("r/z/s"));
    }

    @Test
    void serviceEntry_valid_hasNoProblem() {
        assertThat(IstioValidation.serviceEntry(valid().build())).isEmpty();
        assertThat(IstioValidation.serviceEntry(
                        valid().setHosts(0, "*.corp.example").build()))
                .isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"*", "Greeter.dubbo", "greeter..dubbo", "greeter.123", "-greeter.dubbo", "greeter_x.dubbo"})
    void serviceEntry_badHost_isRefused(String host) {
        assertThat(IstioValidation.serviceEntry(valid().setHosts(0, host).build()))
                .singleElement()
                .asString()
                .startsWith("host '" + host + "'");
    }

    @Test
    void serviceEntry_badPorts_areRefused() {
        ServiceEntry se = valid().clearEndpoints()
                .addPorts(
                        ServicePort.newBuilder().setNumber(20880).setName("tri").setProtocol("GRPC"))
                .addPorts(ServicePort.newBuilder()
                        .setNumber(8080)
                        .setName("dubbo")
                        .setProtocol("HTTP"))
                .addPorts(ServicePort.newBuilder()
                        .setNumber(7070)
                        .setName("Rest_Port")
                        .setProtocol("HTTP"))
                .addPorts(ServicePort.newBuilder()
                        .setNumber(6060)
                        .setName("thrift")
                        .setProtocol("DUBBO"))
                .addPorts(ServicePort.newBuilder().setNumber(0).setName("zero").setProtocol("TCP"))
                .build();

        assertThat(IstioValidation.serviceEntry(se))
                .containsExactlyInAnyOrder(
                        "port number 20880 is used twice, by 'dubbo' and 'tri'",
                        "port name 'dubbo' is used twice",
                        "port name 'Rest_Port' is not a DNS-1123 label",
                        "port thrift: protocol 'DUBBO' is unknown to Istio",
                        "port zero: number 0 is out of 1..65535");
        assertThat(IstioValidation.serviceEntry(
                        valid().clearPorts().clearEndpoints().build()))
                .containsExactly("ports must not be empty");
    }

    @Test
    void serviceEntry_badEndpoints_areRefused() {
        ServiceEntry se = valid().addEndpoints(WorkloadEntry.newBuilder()
                        .setAddress("provider.corp.example")
                        .putPorts("rest", 8080)
                        .putPorts("dubbo", 70000)
                        .putLabels("bad key", "v")
                        .setLocality("r//s"))
                .build();

        assertThat(IstioValidation.serviceEntry(se))
                .hasSize(5)
                .allSatisfy(p -> assertThat(p).startsWith("endpoints[1]: "))
                .anySatisfy(p -> assertThat(p).contains("not an IP address"))
                .anySatisfy(p -> assertThat(p).contains("'rest' is not a port of the ServiceEntry"))
                .anySatisfy(p -> assertThat(p).contains("dubbo=70000"))
                .anySatisfy(p -> assertThat(p).contains("bad key=v"))
                .anySatisfy(p -> assertThat(p).contains("locality 'r//s'"));
    }

    @Test
    void serviceEntry_selectorAndEndpoints_isRefused() {
        ServiceEntry se = valid().setWorkloadSelector(
                        WorkloadSelector.newBuilder().putLabels("app", "greeter"))
                .build();

        assertThat(IstioValidation.serviceEntry(se))
                .containsExactly("only one of workloadSelector and endpoints may be set");
    }

    @Test
    void serviceEntry_exportTo_rulesOfIstio() {
        assertThat(IstioValidation.serviceEntry(
                        valid().addExportTo(".").addExportTo("istio-system").build()))
                .isEmpty();
        assertThat(IstioValidation.serviceEntry(
                        valid().addExportTo("*").addExportTo("team-a").build()))
                .singleElement()
                .asString()
                .contains("cannot be combined");
        assertThat(IstioValidation.serviceEntry(
                        valid().addExportTo(".").addExportTo(".").build()))
                .singleElement()
                .asString()
                .contains("twice");
        assertThat(IstioValidation.serviceEntry(valid().addExportTo("Team_A").build()))
                .singleElement()
                .asString()
                .contains("namespace name");
    }

    @Test
    void workloadEntry_portOutsideTheServiceEntry_isRefused() {
        WorkloadEntry we = WorkloadEntry.newBuilder()
                .setAddress("fd00::1")
                .putPorts("tri", 50051)
                .build();

        assertThat(IstioValidation.workloadEntry(we, Set.of("tri"))).isEmpty();
        assertThat(IstioValidation.workloadEntry(we, Set.of("dubbo")))
                .singleElement()
                .asString()
                .contains("'tri' is not a port");
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "10.0.0.1",
                "0.0.0.0",
                "255.255.255.255",
                "::",
                "::1",
                "fd00::21",
                "1:2:3:4:5:6:7:8",
                "::ffff:10.0.0.1",
                "2001:db8::1:0:0:1",
                "1::8"
            })
    void ipLiterals_valid(String ip) {
        assertThat(IpLiterals.isIp(ip)).isTrue();
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "",
                "10.0.0",
                "10.0.0.256",
                "10.00.0.1",
                "01.0.0.1",
                "10.0.0.1.",
                "a.b.c.d",
                "provider.corp.example",
                ":::",
                "1:2:3:4:5:6:7:8:9",
                "1::2::3",
                "fd00::21%eth0",
                "12345::1",
                ":1",
                "1:",
                "1:2:3:4:5:6:7::8:9",
                "::ffff:10.0.0.256",
                "1.2.3.4::"
            })
    void ipLiterals_invalid(String ip) {
        assertThat(IpLiterals.isIp(ip)).isFalse();
    }
}
