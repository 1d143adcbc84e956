package dev.meshbridge.ingress;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meshbridge.core.route.KubernetesServiceDestination;
import dev.meshbridge.core.route.RegistryDestination;
import dev.meshbridge.core.route.WeightedDestination;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** The destination annotation syntax, checked against the cases of Higress's own destination parser tests. */
class DestinationAnnotationTest {

    private static List<WeightedDestination> ok(String value) {
        DestinationAnnotation.Result r = DestinationAnnotation.parse(value, "cluster.local");
        assertThat(r.problems()).isEmpty();
        return r.destinations();
    }

    private static List<String> problems(String value) {
        return DestinationAnnotation.parse(value, "cluster.local").problems();
    }

    @Test
    void parse_higressSingleLineWithPortAndSubset() {
        assertThat(ok("100% my-svc.DEFAULT-GROUP.xxxx.nacos:8080 v1"))
                .containsExactly(new WeightedDestination(
                        new RegistryDestination("my-svc.default-group.xxxx.nacos", 8080, "v1", new TreeMap<>()), 100));
    }

    @Test
    void parse_higressTwoLinesWithABlankLineBetween() {
        assertThat(ok("50% my-svc.DEFAULT-GROUP.xxxx.nacos:8080 v1\n\n50% my-svc.DEFAULT-GROUP.xxxx.nacos:8080 v2"))
                .extracting(WeightedDestination::weight, w -> ((RegistryDestination) w.destination()).subset())
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(50, "v1"), org.assertj.core.groups.Tuple.tuple(50, "v2"));
    }

    @Test
    void parse_withoutWeight_weighs100_andWeightsAreRelative() {
        assertThat(ok("orders.dubbo\n# canary\n1% orders-canary.dubbo\n"))
                .containsExactly(
                        new WeightedDestination(RegistryDestination.of("orders.dubbo"), 100),
                        new WeightedDestination(RegistryDestination.of("orders-canary.dubbo"), 1));
    }

    @Test
    void parse_kubernetesServiceHost_isAServiceDestination() {
        assertThat(ok("34% bar-service.default.svc.cluster.local:5678"))
                .containsExactly(new WeightedDestination(
                        new KubernetesServiceDestination(
                                "default", "bar-service", "bar-service.default.svc.cluster.local", 5678, ""),
                        34));
        assertThat(problems("bar-service.default.svc.cluster.local"))
                .containsExactly(
                        "line 1 'bar-service.default.svc.cluster.local': a Kubernetes Service destination needs"
                                + " a port (bar-service.default.svc.cluster.local:<port>)");
    }

    @Test
    void parse_labelSubset_ourExtension() {
        assertThat(ok("orders.dubbo version=v2,zone=eu-1"))
                .singleElement()
                .extracting(WeightedDestination::destination)
                .isEqualTo(new RegistryDestination(
                        "orders.dubbo",
                        0,
                        "version-v2-zone-eu-1",
                        new TreeMap<>(Map.of("version", "v2", "zone", "eu-1"))));
    }

    @Test
    void parse_badLines_eachReportedWithItsLine() {
        assertThat(problems("""
                        x% a.dubbo
                        50% b.dubbo:0
                        50% c.dubbo v1 extra
                        Orders_Svc.DEFAULT_GROUP.nacos
                        d.dubbo bad=label=
                        """))
                .containsExactly(
                        "line 1 'x% a.dubbo': the weight 'x%' must be a whole number of 0..1000000 followed by %",
                        "line 2 '50% b.dubbo:0': the port '0' is not a number in 1..65535",
                        "line 3 '50% c.dubbo v1 extra': unexpected 'extra'; the form is [weight%] host[:port] [subset]",
                        "line 4 'Orders_Svc.DEFAULT_GROUP.nacos': the host 'orders_svc.default_group.nacos' has label"
                                + " 'orders_svc', which is not lower-case [a-z0-9-] starting and ending alphanumeric"
                                + " (hosts use '-' where registries use '_': orders-svc.default-group.nacos)",
                        "line 5 'd.dubbo bad=label=': the subset label 'bad=label=' is not a valid key=value label");
    }

    @Test
    void parse_emptyOrAllZeroWeights_refused() {
        assertThat(problems("\n  \n")).containsExactly("names no destination");
        assertThat(problems("0% a.dubbo\n0% b.dubbo"))
                .containsExactly("the weights add up to 0, so no request could be sent");
    }
}
