package dev.meshbridge.envoy.validation;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import com.google.protobuf.StringValue;
import io.envoyproxy.envoy.config.core.v3.Address;
import io.envoyproxy.envoy.config.core.v3.AggregatedConfigSource;
import io.envoyproxy.envoy.config.core.v3.ConfigSource;
import io.envoyproxy.envoy.config.core.v3.SocketAddress;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.extensions.filters.network.dubbo_proxy.v3.DubboProxy;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.Rds;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class EnvoyValidatorsTest {

    /** Every message type reachable from the typed configs has a generated validator: nothing passes unchecked. */
    @Test
    void everyReachableEnvoyMessageHasAGeneratedValidator() throws Exception {
        Deque<Message> todo = new ArrayDeque<>(EnvoyValidators.TYPED_CONFIGS.values());
        Set<String> seen = new HashSet<>();
        List<String> missing = new ArrayList<>();
        while (!todo.isEmpty()) {
            Message m = todo.pop();
            String name = m.getDescriptorForType().getFullName();
            if (name.startsWith("google.protobuf.") || !seen.add(name)) continue;
            for (FieldDescriptor f : m.getDescriptorForType().getFields()) {
                if (f.getJavaType() == FieldDescriptor.JavaType.MESSAGE) {
                    todo.push(m.newBuilderForType().newBuilderForField(f).getDefaultInstanceForType());
                }
            }
            // a map entry, or a type whose file has no rule (PGV generates nothing there): what it holds is checked
            if (m.getDescriptorForType().getOptions().getMapEntry() || !EnvoyValidators.hasRules(m)) continue;
            Class<?> outer = m.getClass();
            while (outer.getEnclosingClass() != null) outer = outer.getEnclosingClass();
            try {
                Class<?> validator = Class.forName(
                        outer.getName() + "Validator", false, m.getClass().getClassLoader());
                Object impl = validator.getMethod("validatorFor", Class.class).invoke(null, m.getClass());
                if (impl == null) missing.add(name);
            } catch (ClassNotFoundException e) {
                missing.add(name);
            }
        }
        assertThat(seen).hasSizeGreaterThan(300);
        assertThat(missing).isEmpty();
    }

    @Test
    void aValidListenerPasses() {
        assertThat(EnvoyValidators.validate(listener(hcm("outbound_http")))).isEmpty();
    }

    @Test
    void aBrokenRuleInsideATypedConfigIsReported() {
        // HttpConnectionManager.stat_prefix: string.min_len 1, inside the filter's typed_config
        List<String> problems = EnvoyValidators.validate(listener(hcm("")));
        assertThat(problems).singleElement().asString().contains("stat_prefix").contains("typed_config");
    }

    @Test
    void brokenRulesOfResourcesAreReported() {
        // RouteConfiguration.virtual_hosts[].domains: repeated.min_items 1
        RouteConfiguration rc = RouteConfiguration.newBuilder()
                .setName("80")
                .addVirtualHosts(VirtualHost.newBuilder().setName("orders"))
                .build();
        assertThat(EnvoyValidators.validate(rc)).singleElement().asString().contains("domains");
        // SocketAddress.port_value: uint32.lte 65535
        Listener l = listener(hcm("x")).toBuilder()
                .setAddress(Address.newBuilder()
                        .setSocketAddress(
                                SocketAddress.newBuilder().setAddress("0.0.0.0").setPortValue(70000)))
                .build();
        assertThat(EnvoyValidators.validate(l)).singleElement().asString().contains("port_value");
        // DubboProxy.stat_prefix: string.min_len 1
        Listener dubbo = listener(Any.pack(DubboProxy.newBuilder().build()));
        assertThat(EnvoyValidators.validate(dubbo)).singleElement().asString().contains("stat_prefix");
    }

    @Test
    void anUnknownTypedConfigIsReportedNotPassed() {
        assertThat(EnvoyValidators.validate(listener(Any.pack(StringValue.of("x")))))
                .singleElement()
                .asString()
                .contains("google.protobuf.StringValue");
    }

    private static Any hcm(String statPrefix) {
        return Any.pack(HttpConnectionManager.newBuilder()
                .setStatPrefix(statPrefix)
                .setRds(Rds.newBuilder()
                        .setRouteConfigName("80")
                        .setConfigSource(ConfigSource.newBuilder().setAds(AggregatedConfigSource.getDefaultInstance())))
                .build());
    }

    private static Listener listener(Any filterConfig) {
        return Listener.newBuilder()
                .setName("0.0.0.0_15001")
                .setAddress(Address.newBuilder()
                        .setSocketAddress(
                                SocketAddress.newBuilder().setAddress("0.0.0.0").setPortValue(15001)))
                .addFilterChains(FilterChain.newBuilder()
                        .addFilters(Filter.newBuilder()
                                .setName("envoy.filters.network.x")
                                .setTypedConfig(filterConfig)))
                .build();
    }
}
