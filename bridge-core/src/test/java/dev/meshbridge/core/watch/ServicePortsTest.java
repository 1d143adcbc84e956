package dev.meshbridge.core.watch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meshbridge.core.config.EmptyServicePolicy;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServicePort;
import java.time.Duration;
import java.util.List;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class ServicePortsTest {

    private static RegistryConfig config(TreeMap<String, Integer> servicePorts) {
        return new RegistryConfig(
                "test", "r", List.of("h:1"), EmptyServicePolicy.DELETE, Duration.ofSeconds(1), servicePorts, "x");
    }

    @Test
    void configuredPort_thenProtocolDefault_thenLowestEndpointPort() {
        TreeMap<String, Integer> configured = new TreeMap<>();
        configured.put("http", 8080);
        ServicePorts p = new ServicePorts(config(configured))
                .add("http", Protocol.HTTP, 9001)
                .add("dubbo", Protocol.DUBBO, 20881)
                .add("tcp", Protocol.TCP, 7002)
                .add("tcp", Protocol.TCP, 7001)
                .add("raw", null, 6000);
        assertThat(p.list())
                .containsExactly(
                        new ServicePort("dubbo", 20880, Protocol.DUBBO),
                        new ServicePort("http", 8080, Protocol.HTTP),
                        new ServicePort("raw", 6000, Protocol.TCP),
                        new ServicePort("tcp", 7001, Protocol.TCP));
    }

    @Test
    void disagreeingProtocols_giveTheSameAnswerInAnyOrder() {
        RegistryConfig c = config(new TreeMap<>());
        List<ServicePort> one = new ServicePorts(c)
                .add("web", Protocol.HTTP2, 81)
                .add("web", Protocol.HTTP, 80)
                .list();
        List<ServicePort> two = new ServicePorts(c)
                .add("web", Protocol.HTTP, 80)
                .add("web", Protocol.HTTP2, 81)
                .list();
        assertThat(one).isEqualTo(two).containsExactly(new ServicePort("web", 80, Protocol.HTTP));
    }
}
