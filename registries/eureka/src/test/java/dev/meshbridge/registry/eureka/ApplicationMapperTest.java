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
}
