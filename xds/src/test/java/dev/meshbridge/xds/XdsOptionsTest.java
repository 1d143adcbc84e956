package dev.meshbridge.xds;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.meshbridge.core.config.ConfigException;
import dev.meshbridge.core.config.ConfigNode;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;

class XdsOptionsTest {

    private static XdsOptions parse(String yaml) throws ConfigException {
        ConfigNode root = ConfigNode.parse("bridge.yaml", yaml);
        root.accept("registries"); // another module's section
        XdsOptions options = XdsOptions.parse(root.section("xds"));
        root.finish();
        return options;
    }

    @Test
    void noSection_givesTheDefaults() throws Exception {
        XdsOptions o = parse("registries: []\n");

        assertThat(o).isEqualTo(XdsOptions.DEFAULTS);
        assertThat(o.bindAddress()).isEqualTo("0.0.0.0");
        assertThat(o.port()).isEqualTo(15010);
        assertThat(o.connectTimeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(o.grpcListeners()).isTrue();
        assertThat(o.lbMetadataLabels()).isEmpty();
        assertThat(o.keepaliveTime()).isEqualTo(Duration.ofSeconds(30));
        assertThat(o.maxConnectionAge()).isEqualTo(Duration.ZERO);
        assertThat(o.ingress()).isEqualTo(new XdsOptions.Ingress(true, "0.0.0.0", 8080, 8443));
    }

    @Test
    void everyOption_isRead() throws Exception {
        XdsOptions o = parse("""
                xds:
                  bindAddress: 127.0.0.1
                  port: 0
                  connectTimeout: 250ms
                  grpcListeners: false
                  lbMetadataLabels: [version, zone]
                  keepaliveTime: 1m
                  maxConnectionAge: 30m
                  healthyPanicThreshold: 25
                """);

        assertThat(o.bindAddress()).isEqualTo("127.0.0.1");
        assertThat(o.port()).isZero();
        assertThat(o.connectTimeout()).isEqualTo(Duration.ofMillis(250));
        assertThat(o.grpcListeners()).isFalse();
        assertThat(o.lbMetadataLabels()).isEqualTo(Set.of("version", "zone"));
        assertThat(o.keepaliveTime()).isEqualTo(Duration.ofMinutes(1));
        assertThat(o.maxConnectionAge()).isEqualTo(Duration.ofMinutes(30));
        assertThat(o.translatorOptions().lbLabels()).isEqualTo(Set.of("version", "zone"));
        assertThat(o.translatorOptions().healthyPanicThreshold()).isEqualTo(25.0);
        assertThat(XdsOptions.DEFAULTS.translatorOptions().healthyPanicThreshold())
                .isZero();
    }

    @Test
    void starInLbMetadataLabels_copiesEveryLabel() throws Exception {
        assertThat(parse("xds:\n  lbMetadataLabels: ['*']\n").lbMetadataLabels())
                .isNull();
        assertThat(parse("xds:\n  lbMetadataLabels: []\n").lbMetadataLabels()).isEmpty();
    }

    @Test
    void badValues_areRefusedWithLineAndField() {
        assertThatThrownBy(() -> parse("""
                        xds:
                          bindAddress: not an address
                          port: 70000
                          connectTimeout: 0s
                          maxConnectionAge: soon
                          lbMetadataLabels: ["bad key!"]
                          keepaliveTim: 10s
                          healthyPanicThreshold: 150
                        """))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("bridge.yaml:2:16: xds.bindAddress: expected an IP address")
                .hasMessageContaining("bridge.yaml:3:9: xds.port: expected an integer in 0..65535, got 70000")
                .hasMessageContaining("xds.connectTimeout: must be positive")
                .hasMessageContaining("xds.maxConnectionAge: expected a duration")
                .hasMessageContaining("xds.lbMetadataLabels: 'bad key!' is not a valid label key")
                .hasMessageContaining("xds.keepaliveTim: unknown field; did you mean 'keepaliveTime'?")
                .hasMessageContaining("xds.healthyPanicThreshold: expected an integer in 0..100, got 150");
    }

    @Test
    void ingressSection_isRead() throws Exception {
        XdsOptions o = parse("""
                xds:
                  ingress:
                    enabled: false
                    bindAddress: "::"
                    httpPort: 80
                    httpsPort: 0
                """);

        assertThat(o.ingress()).isEqualTo(new XdsOptions.Ingress(false, "::", 80, 0));
    }

    @Test
    void ingressSection_badValues_areRefusedWithLineAndField() {
        assertThatThrownBy(() -> parse("""
                        xds:
                          ingress:
                            bindAddress: localhost
                            httpPort: 8443
                            httpsPort: 8443
                            httpPorts: 1
                        """))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("bridge.yaml:3:18: xds.ingress.bindAddress: expected an IP address")
                .hasMessageContaining("xds.ingress.httpsPort: must differ from httpPort (8443)")
                .hasMessageContaining("xds.ingress.httpPorts: unknown field; did you mean 'httpPort'?");
    }

    @Test
    void ioThreads_defaultsToAutomatic_isRead_andOutOfRangeIsRefusedWithLineAndField() throws Exception {
        assertThat(parse("registries: []\n").ioThreads()).isZero();
        assertThat(parse("xds:\n  ioThreads: 3\n").ioThreads()).isEqualTo(3);
        assertThatThrownBy(() -> parse("xds:\n  ioThreads: 65\n"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("bridge.yaml:2:")
                .hasMessageContaining("xds.ioThreads");
        assertThatThrownBy(() -> parse("xds:\n  ioThreads: -1\n"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("xds.ioThreads");
    }

    @Test
    void sidecarSection_isRead_withItsDefaults() throws Exception {
        assertThat(parse("registries: []\n").sidecar()).isEqualTo(SidecarOptions.DEFAULTS);
        XdsOptions o = parse("""
                xds:
                  sidecar:
                    bindAddress: 127.0.0.1
                    httpPort: 15001
                    httpServicePorts: [80, 50051]
                    dubboPort: 0
                    tcp:
                      - service: mysql.dc1.consul
                        port: 3306
                        listenPort: 13306
                      - service: redis.dc1.consul
                        port: 6379
                """);
        assertThat(o.sidecar())
                .isEqualTo(new SidecarOptions(
                        true,
                        "127.0.0.1",
                        15001,
                        java.util.List.of(80, 50051),
                        0,
                        java.util.List.of(
                                new SidecarOptions.TcpMapping("mysql.dc1.consul", 3306, 13306),
                                new SidecarOptions.TcpMapping("redis.dc1.consul", 6379, 6379))));
        assertThat(parse("xds:\n  sidecar:\n    enabled: false\n").sidecar().enabled())
                .isFalse();
    }

    @Test
    void sidecarSection_badValues_areRefusedWithLineAndField() {
        assertThatThrownBy(() -> parse("""
                        xds:
                          sidecar:
                            bindAddress: localhost
                            httpPort: 15001
                            httpServicePorts: [80, 15001, http]
                            dubboPort: 80
                            tcp:
                              - service: Not_A_Host
                                port: 3306
                              - service: db.consul
                                port: 5432
                                listenPort: 15001
                              - port: 1
                        """))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("bridge.yaml:3:18: xds.sidecar.bindAddress: expected an IP address")
                .hasMessageContaining(
                        "xds.sidecar.httpServicePorts: port 15001 is already used by another sidecar" + " listener")
                .hasMessageContaining("xds.sidecar.httpServicePorts: 'http' is not a port in 1..65535")
                .hasMessageContaining("xds.sidecar.dubboPort: port 80 is already used by another sidecar listener")
                .hasMessageContaining("xds.sidecar.tcp[0].service: 'Not_A_Host' is not a catalog host")
                .hasMessageContaining("xds.sidecar.tcp[1].listenPort: port 15001 is already used")
                .hasMessageContaining("xds.sidecar.tcp[2].service");
    }
}
