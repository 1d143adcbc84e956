package dev.meshbridge.core.naming;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.meshbridge.core.dubbo.DubboNaming;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class HostTemplateTest {

    private static final Set<String> NACOS = Set.of("service", "group", "namespace");

    @Test
    void render_nacosDefault_matchesHigressNames() {
        HostTemplate t = HostTemplate.parse("{service}.{group}.{namespace}.nacos", NACOS);
        assertThat(t.render(Map.of("service", "Order_Service", "group", "DEFAULT_GROUP", "namespace", "public")))
                .isEqualTo("order-service.default-group.public.nacos");
    }

    @Test
    void render_optionalPartWithEmptyVariable_isLeftOut() {
        HostTemplate t = DubboNaming.interfaceTemplate(null);
        assertThat(DubboNaming.interfaceHost(t, "zk", "org.demo.GreeterService", "", "", "app"))
                .isEqualTo("org.demo.greeterservice.dubbo");
        assertThat(DubboNaming.interfaceHost(t, "zk", "org.demo.GreeterService", "1.0.0", "", "app"))
                .isEqualTo("org.demo.greeterservice.v-1-0-0.dubbo");
        assertThat(DubboNaming.interfaceHost(t, "zk", "org.demo.GreeterService", "", "blue", "app"))
                .isEqualTo("org.demo.greeterservice.g-blue.dubbo");
        assertThat(DubboNaming.interfaceHost(t, "zk", "org.demo.GreeterService", "2.0", "Blue_Team", "app"))
                .isEqualTo("org.demo.greeterservice.v-2-0.g-blue-team.dubbo");
    }

    @Test
    void render_dubboVersionsAndGroups_giveDistinctHosts() {
        HostTemplate t = DubboNaming.interfaceTemplate(null);
        Set<String> hosts = new java.util.HashSet<>();
        for (String v : new String[] {"", "1.0.0", "2.0.0"}) {
            for (String g : new String[] {"", "a", "b"}) {
                hosts.add(DubboNaming.interfaceHost(t, "zk", "org.demo.Greeter", v, g, "app"));
            }
        }
        assertThat(hosts).hasSize(9).allMatch(Dns1123::isSubdomain);
    }

    @Test
    void render_longLabel_isShortenedWithHashAndStaysDistinct() {
        HostTemplate t = HostTemplate.parse("{service}.eureka", Set.of("service"));
        String a = t.render(Map.of("service", "x".repeat(80) + "a"));
        String b = t.render(Map.of("service", "x".repeat(80) + "b"));
        assertThat(a).isNotEqualTo(b);
        assertThat(Dns1123.isSubdomain(a)).isTrue();
        assertThat(a.split("\\.")[0]).hasSize(63);
    }

    @Test
    void render_emptyResult_isRefusedWithReason() {
        HostTemplate t = HostTemplate.parse("{service}", Set.of("service"));
        assertThatThrownBy(() -> t.render(Map.of("service", "___")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("is empty");
    }

    @Test
    void parse_unknownVariable_namesTheVariablesAvailable() {
        assertThatThrownBy(() -> HostTemplate.parse("{svc}.nacos", NACOS))
                .hasMessageContaining("unknown variable {svc}")
                .hasMessageContaining("[group, namespace, service]");
    }

    @Test
    void parse_malformed_isRefused() {
        assertThatThrownBy(() -> HostTemplate.parse("{service.nacos", NACOS)).hasMessageContaining("not closed");
        assertThatThrownBy(() -> HostTemplate.parse("[{service}", NACOS)).hasMessageContaining("not closed");
        assertThatThrownBy(() -> HostTemplate.parse("static.nacos", NACOS)).hasMessageContaining("uses no variable");
    }
}
