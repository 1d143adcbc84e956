package dev.meshbridge.registry.eureka;

import static org.assertj.core.api.Assertions.assertThat;

import com.netflix.appinfo.InstanceInfo;
import com.netflix.discovery.converters.jackson.EurekaJsonJacksonCodec;
import com.netflix.discovery.shared.Applications;
import java.io.IOException;
import org.junit.jupiter.api.Test;

/** The local copy of the registry, fed with Eureka JSON as a server sends it (Eureka 2.0 wire format). */
class LocalRegistryTest {

    private static final EurekaJsonJacksonCodec CODEC = new EurekaJsonJacksonCodec();

    private static String instance(String app, String ip, String status, long updated, String action) {
        return """
                {"instanceId":"%2$s:%1$s:8080","hostName":"%2$s","app":"%1$s","ipAddr":"%2$s","status":"%3$s",
                 "overriddenStatus":"UNKNOWN","port":{"$":8080,"@enabled":"true"},"securePort":{"$":443,"@enabled":"false"},
                 "countryId":1,"dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"},
                 "metadata":{"@class":"java.util.Collections$EmptyMap"},"vipAddress":"%1$s","isCoordinatingDiscoveryServer":"false",
                 "lastUpdatedTimestamp":"%4$d","lastDirtyTimestamp":"%4$d","actionType":"%5$s"}""".formatted(app, ip, status, updated, action);
    }

    private static Applications apps(String hash, String app, String... instances) {
        String json = """
                {"applications":{"versions__delta":"1","apps__hashcode":"%s","application":[{"name":"%s","instance":[%s]}]}}""".formatted(hash, app, String.join(",", instances));
        try {
            return CODEC.getObjectMapper(Applications.class).readValue(json, Applications.class);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void replace_thenReconcileHash_countsInstancesPerStatusLikeTheServer() {
        LocalRegistry r = new LocalRegistry();

        var touched = r.replace(apps(
                "DOWN_1_UP_2_",
                "ORDERS",
                instance("ORDERS", "10.0.0.1", "UP", 1, "ADDED"),
                instance("ORDERS", "10.0.0.2", "UP", 1, "ADDED"),
                instance("ORDERS", "10.0.0.3", "DOWN", 1, "ADDED")));

        assertThat(touched).containsExactly("ORDERS");
        assertThat(r.reconcileHash()).isEqualTo("DOWN_1_UP_2_");
        assertThat(r.instances("ORDERS"))
                .extracting(InstanceInfo::getIPAddr)
                .containsExactlyInAnyOrder("10.0.0.1", "10.0.0.2", "10.0.0.3");
        assertThat(r.instances("ORDERS").iterator().next().getMetadata()).isEmpty();
    }

    @Test
    void apply_modifiedInstance_touchesItsApplication_andARepeatedDeltaTouchesNothing() {
        LocalRegistry r = new LocalRegistry();
        r.replace(apps("UP_1_", "ORDERS", instance("ORDERS", "10.0.0.1", "UP", 1, "ADDED")));
        Applications delta =
                apps("OUT_OF_SERVICE_1_", "ORDERS", instance("ORDERS", "10.0.0.1", "OUT_OF_SERVICE", 2, "MODIFIED"));

        assertThat(r.apply(delta)).containsExactly("ORDERS");
        assertThat(r.reconcileHash()).isEqualTo(delta.getAppsHashCode());
        assertThat(r.apply(delta)).isEmpty();
    }

    @Test
    void apply_deletedLastInstance_removesTheApplication() {
        LocalRegistry r = new LocalRegistry();
        r.replace(apps("UP_1_", "ORDERS", instance("ORDERS", "10.0.0.1", "UP", 1, "ADDED")));

        var touched = r.apply(apps("", "ORDERS", instance("ORDERS", "10.0.0.1", "UP", 1, "DELETED")));

        assertThat(touched).containsExactly("ORDERS");
        assertThat(r.applications()).isEmpty();
        assertThat(r.reconcileHash()).isEmpty();
    }

    @Test
    void apply_deltaThatMissedAChange_doesNotReconcile() {
        LocalRegistry r = new LocalRegistry();
        r.replace(apps("UP_1_", "ORDERS", instance("ORDERS", "10.0.0.1", "UP", 1, "ADDED")));

        // the server has a second instance whose ADDED entry already left its delta queue
        Applications delta = apps("UP_2_", "ORDERS", instance("ORDERS", "10.0.0.1", "UP", 1, "MODIFIED"));
        r.apply(delta);

        assertThat(r.reconcileHash()).isNotEqualTo(delta.getAppsHashCode());
    }
}
