package dev.meshbridge.registry.eureka;

import static org.assertj.core.api.Assertions.assertThat;

import com.netflix.appinfo.InstanceInfo.InstanceStatus;
import dev.meshbridge.core.model.Health;
import org.junit.jupiter.api.Test;

class ApplicationMapperTest {

    @Test
    void health_onlyUpIsHealthy_outOfServiceDrains() {
        assertThat(ApplicationMapper.health(InstanceStatus.UP)).isEqualTo(Health.HEALTHY);
        assertThat(ApplicationMapper.health(InstanceStatus.OUT_OF_SERVICE)).isEqualTo(Health.DRAINING);
        assertThat(ApplicationMapper.health(InstanceStatus.DOWN)).isEqualTo(Health.UNHEALTHY);
        assertThat(ApplicationMapper.health(InstanceStatus.STARTING)).isEqualTo(Health.UNHEALTHY);
        assertThat(ApplicationMapper.health(InstanceStatus.UNKNOWN)).isEqualTo(Health.UNHEALTHY);
        assertThat(ApplicationMapper.health(null)).isEqualTo(Health.UNHEALTHY);
    }

    @Test
    void ipLiteral_acceptsIpv4AndIpv6_andNeverLooksUpNames() {
        assertThat(ApplicationMapper.ipLiteral("10.0.0.1")).isEqualTo("10.0.0.1");
        assertThat(ApplicationMapper.ipLiteral(" 192.168.1.254 ")).isEqualTo("192.168.1.254");
        assertThat(ApplicationMapper.ipLiteral("fd00::1")).isEqualTo("fd00:0:0:0:0:0:0:1");
        assertThat(ApplicationMapper.ipLiteral("[::1]")).isEqualTo("0:0:0:0:0:0:0:1");
        assertThat(ApplicationMapper.ipLiteral("256.0.0.1")).isNull();
        assertThat(ApplicationMapper.ipLiteral("10.0.0")).isNull();
        assertThat(ApplicationMapper.ipLiteral("localhost")).isNull();
        assertThat(ApplicationMapper.ipLiteral("orders-7f9c.pod.cluster.local")).isNull();
    }
}
