package dev.meshbridge.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meshbridge.mcp.api.networking.v1alpha3.Destination;
import dev.meshbridge.mcp.api.networking.v1alpha3.DestinationRule;
import dev.meshbridge.mcp.api.networking.v1alpha3.Gateway;
import dev.meshbridge.mcp.api.networking.v1alpha3.HTTPDirectResponse;
import dev.meshbridge.mcp.api.networking.v1alpha3.HTTPFaultInjection;
import dev.meshbridge.mcp.api.networking.v1alpha3.HTTPMatchRequest;
import dev.meshbridge.mcp.api.networking.v1alpha3.HTTPRoute;
import dev.meshbridge.mcp.api.networking.v1alpha3.HTTPRouteDestination;
import dev.meshbridge.mcp.api.networking.v1alpha3.Percent;
import dev.meshbridge.mcp.api.networking.v1alpha3.Port;
import dev.meshbridge.mcp.api.networking.v1alpha3.PortSelector;
import dev.meshbridge.mcp.api.networking.v1alpha3.Server;
import dev.meshbridge.mcp.api.networking.v1alpha3.ServerTLSSettings;
import dev.meshbridge.mcp.api.networking.v1alpha3.ServiceEntry;
import dev.meshbridge.mcp.api.networking.v1alpha3.ServicePort;
import dev.meshbridge.mcp.api.networking.v1alpha3.StringMatch;
import dev.meshbridge.mcp.api.networking.v1alpha3.Subset;
import dev.meshbridge.mcp.api.networking.v1alpha3.VirtualService;
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

    // ------------------------------------------------------------------ Gateway, VirtualService, DestinationRule

    static Server.Builder server(String protocol, int number, String name, String host) {
        return Server.newBuilder()
                .setPort(Port.newBuilder()
                        .setProtocol(protocol)
                        .setNumber(number)
                        .setName(name))
                .addHosts(host);
    }

    static ServerTLSSettings.Builder simple(String credential) {
        return ServerTLSSettings.newBuilder()
                .setMode(ServerTLSSettings.TLSmode.SIMPLE)
                .setCredentialName(credential);
    }

    static Gateway.Builder gateway() {
        return Gateway.newBuilder()
                .putSelector("istio", "ingressgateway")
                .addServers(server("HTTP", 80, "http", "shop.example.com"))
                .addServers(server("HTTPS", 443, "https", "shop.example.com")
                        .setTls(simple("kubernetes-gateway://shop/shop-tls")));
    }

    @Test
    void gateway_valid_hasNoProblem() {
        assertThat(IstioValidation.gateway("shop-example-com-1", gateway().build()))
                .isEmpty();
        assertThat(IstioValidation.gateway(
                        "any",
                        Gateway.newBuilder()
                                .putSelector("istio", "ingressgateway")
                                .addServers(server("HTTP", 80, "http", "*"))
                                .addServers(server("HTTP", 8080, "http-alt", "prod/*.example.com")
                                        .setTls(ServerTLSSettings.newBuilder().setHttpsRedirect(true)))
                                .build()))
                .isEmpty();
    }

    @Test
    void gateway_whatIstiodRefuses_isReported() {
        assertThat(IstioValidation.gateway("shop.example.com", gateway().build()))
                .containsExactly("gateway name 'shop.example.com' is not a DNS-1123 label");
        assertThat(IstioValidation.gateway("gw", Gateway.getDefaultInstance()))
                .containsExactly("gateway must have at least one server");
        Gateway bad = Gateway.newBuilder()
                .putSelector("istio", "ingress gateway")
                .addServers(server("HTTPS", 443, "web", "shop.example.com"))
                .addServers(server("HTTP", 80, "web", "bad/ns/x").setTls(simple("shop-tls")))
                .addServers(server("QUIC", 0, "", "Shop.example.com"))
                .addServers(server("HTTPS", 8443, "tls", "a.example.com")
                        .setTls(ServerTLSSettings.newBuilder().setMode(ServerTLSSettings.TLSmode.MUTUAL)))
                .build();
        assertThat(IstioValidation.gateway("gw", bad))
                .containsExactly(
                        "servers[0]: server must have TLS settings for HTTPS/TLS protocols",
                        "servers[1]: host 'bad/ns/x' has label 'ns/x', which is not lower-case [a-z0-9-] starting and"
                                + " ending alphanumeric",
                        "servers[1]: server cannot have TLS settings for plain text HTTP ports",
                        "port names in servers must be unique: duplicate name web",
                        "servers[2]: host 'Shop.example.com' has label 'Shop', which is not lower-case [a-z0-9-]"
                                + " starting and ending alphanumeric",
                        "servers[2]: invalid protocol 'QUIC'",
                        "servers[2]: port number 0 is out of 1..65535",
                        "servers[2]: port name must be set",
                        "servers[3]: MUTUAL TLS requires a server certificate",
                        "servers[3]: MUTUAL TLS requires a private key",
                        "servers[3]: MUTUAL TLS requires a client CA bundle",
                        "selector: 'istio=ingress gateway' is not a valid Kubernetes label");
    }

    static HTTPRoute.Builder routeTo(String host, int port) {
        return HTTPRoute.newBuilder()
                .addMatch(HTTPMatchRequest.newBuilder()
                        .setUri(StringMatch.newBuilder().setPrefix("/")))
                .addRoute(HTTPRouteDestination.newBuilder()
                        .setDestination(Destination.newBuilder()
                                .setHost(host)
                                .setPort(PortSelector.newBuilder().setNumber(port))));
    }

    static VirtualService.Builder virtualService() {
        return VirtualService.newBuilder()
                .addHosts("shop.example.com")
                .addGateways("istio-system/shop-gw")
                .addHttp(routeTo("orders.springcloud", 80));
    }

    @Test
    void virtualService_valid_hasNoProblem() {
        assertThat(IstioValidation.virtualService(virtualService().build())).isEmpty();
        VirtualService anyHost = VirtualService.newBuilder()
                .addHosts("*")
                .addGateways("istio-system/any")
                .addHttp(HTTPRoute.newBuilder()
                        .setDirectResponse(HTTPDirectResponse.newBuilder().setStatus(503)))
                .addHttp(routeTo("orders.springcloud", 80)
                        .setFault(HTTPFaultInjection.newBuilder()
                                .setAbort(HTTPFaultInjection.Abort.newBuilder()
                                        .setHttpStatus(503)
                                        .setPercentage(Percent.newBuilder().setValue(0.0001)))))
                .build();
        assertThat(IstioValidation.virtualService(anyHost)).isEmpty();
    }

    @Test
    void virtualService_whatIstiodRefuses_isReported() {
        assertThat(IstioValidation.virtualService(
                        virtualService().clearGateways().setHosts(0, "*").build()))
                .containsExactly("host '*' is not allowed for virtual services bound to the mesh gateway");
        VirtualService bad = VirtualService.newBuilder()
                .addHosts("shop.example.com")
                .addHosts("*.example.com")
                .addGateways("shop-gw.istio-system")
                .addHttp(routeTo("orders.springcloud", 80)
                        .setDirectResponse(HTTPDirectResponse.newBuilder().setStatus(700)))
                .addHttp(HTTPRoute.newBuilder().setName("empty"))
                .addHttp(routeTo("*", 0)
                        .setRoute(
                                0,
                                HTTPRouteDestination.newBuilder()
                                        .setDestination(Destination.newBuilder()
                                                .setHost("*")
                                                .setSubset("V1"))
                                        .setWeight(0))
                        .addRoute(HTTPRouteDestination.newBuilder()
                                .setDestination(Destination.newBuilder().setHost("orders.springcloud")))
                        .setFault(HTTPFaultInjection.newBuilder()
                                .setAbort(HTTPFaultInjection.Abort.newBuilder()
                                        .setHttpStatus(503)
                                        .setPercentage(Percent.newBuilder().setValue(0.00001)))))
                .build();
        assertThat(IstioValidation.virtualService(bad))
                .containsExactly(
                        "duplicate hosts in virtual service: shop.example.com & *.example.com",
                        "gateway 'shop-gw.istio-system' is not namespace/name of DNS-1123 labels",
                        "http[0]: HTTP route cannot contain both route and direct_response",
                        "http[0]: direct_response status 700 is not in 200..599",
                        "http[1] (empty): HTTP route, redirect or direct_response is required",
                        "http[2]: destination host '*' is not a destination",
                        "http[2]: subset name is invalid: V1",
                        "http[2]: total destination weight = 0",
                        "http[2]: percentage 1.0E-5 is neither 0.0, nor in range [0.0001, 100.0]");
    }

    @Test
    void virtualService_rewrites_uriOrRegexNeverBoth() {
        var regex = dev.meshbridge.mcp.api.networking.v1alpha3.RegexRewrite.newBuilder()
                .setMatch("^.*$");
        assertThat(IstioValidation.virtualService(virtualService()
                        .setHttp(
                                0,
                                routeTo("orders.springcloud", 80)
                                        .setRewrite(dev.meshbridge.mcp.api.networking.v1alpha3.HTTPRewrite.newBuilder()
                                                .setUriRegexRewrite(regex.setRewrite("/index.html"))))
                        .build()))
                .isEmpty();
        assertThat(IstioValidation.virtualService(virtualService()
                        .setHttp(
                                0,
                                routeTo("orders.springcloud", 80)
                                        .setRewrite(dev.meshbridge.mcp.api.networking.v1alpha3.HTTPRewrite.newBuilder()
                                                .setUri("/api")
                                                .setUriRegexRewrite(regex.setRewrite(""))))
                        .build()))
                .containsExactly(
                        "http[0]: rewrite may only contain one of URI or UriRegexRewrite",
                        "http[0]: UriRegexRewrite requires both Rewrite and Match fields to be specified");
        assertThat(
                        IstioValidation.virtualService(virtualService()
                                .setHttp(
                                        0,
                                        routeTo("orders.springcloud", 80)
                                                .setRewrite(dev.meshbridge.mcp.api.networking.v1alpha3.HTTPRewrite
                                                        .getDefaultInstance()))
                                .build()))
                .containsExactly("http[0]: rewrite must specify at least one of URI, UriRegexRewrite, or authority");
    }

    @Test
    void destinationRule_validAndRefused() {
        DestinationRule.Builder rule = DestinationRule.newBuilder()
                .setHost("orders.springcloud")
                .addSubsets(Subset.newBuilder().setName("version-v1").putLabels("version", "v1"));
        assertThat(IstioValidation.destinationRule(rule.build())).isEmpty();

        rule.addSubsets(Subset.newBuilder().setName("version-v1").putLabels("version", "v1"))
                .addSubsets(Subset.newBuilder().setName("Gold").putLabels("tier", "gold!"))
                .setHost("orders_springcloud");
        assertThat(IstioValidation.destinationRule(rule.build()))
                .containsExactly(
                        "host 'orders_springcloud' has label 'orders_springcloud', which is not lower-case [a-z0-9-]"
                                + " starting and ending alphanumeric",
                        "duplicate subset names: version-v1",
                        "subset name is invalid: Gold",
                        "subset Gold labels: 'tier=gold!' is not a valid Kubernetes label");
    }
}
