package dev.meshbridge.xds;

import static org.assertj.core.api.Assertions.assertThat;

import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteAction;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.RouteMatch;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.extensions.filters.http.router.v3.Router;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.envoyproxy.envoy.type.matcher.v3.RegexMatchAndSubstitute;
import io.envoyproxy.envoy.type.matcher.v3.RegexMatcher;
import org.junit.jupiter.api.Test;

/** Envoy's checks beyond its field rules, each with the case it catches. */
class EnvoySemanticsTest {

    private static XdsResource route(VirtualHost... hosts) {
        RouteConfiguration.Builder rc = RouteConfiguration.newBuilder().setName("r");
        for (VirtualHost h : hosts) rc.addVirtualHosts(h);
        return EnvoyTranslator.resource(XdsType.ROUTE, "r", rc.build(), false);
    }

    private static VirtualHost host(String name, String... domains) {
        return VirtualHost.newBuilder()
                .setName(name)
                .addAllDomains(java.util.List.of(domains))
                .addRoutes(Route.newBuilder()
                        .setMatch(RouteMatch.newBuilder().setPrefix("/"))
                        .setRoute(RouteAction.newBuilder().setCluster("c")))
                .build();
    }

    @Test
    void aDomainInTwoVirtualHosts_withoutRegardToCase_isRefused() {
        assertThat(EnvoySemantics.check(route(host("a", "orders.eureka"), host("b", "Orders.Eureka"))))
                .containsExactly("r: domain Orders.Eureka is in two virtual hosts");
        assertThat(EnvoySemantics.check(route(host("a", "orders.eureka"), host("b", "orders.zookeeper"))))
                .isEmpty();
    }

    @Test
    void twoCatchAllVirtualHosts_areRefused() {
        assertThat(EnvoySemantics.check(route(host("a", "*"), host("b", "*"))))
                .contains("r: two virtual hosts have the domain *");
    }

    @Test
    void aRegexThatDoesNotCompile_isRefused() {
        VirtualHost h = host("a", "x").toBuilder()
                .setRoutes(
                        0,
                        Route.newBuilder()
                                .setMatch(RouteMatch.newBuilder().setPrefix("/"))
                                .setRoute(RouteAction.newBuilder()
                                        .setCluster("c")
                                        .setRegexRewrite(RegexMatchAndSubstitute.newBuilder()
                                                .setPattern(RegexMatcher.newBuilder()
                                                        .setRegex("^/(a"))
                                                .setSubstitution("/"))))
                .build();
        assertThat(EnvoySemantics.check(route(h))).containsExactly("r: regex ^/(a does not compile");
    }

    @Test
    void aRouterThatIsNotLast_orTwoChainsWithOneMatch_areRefused() {
        HttpFilter router = HttpFilter.newBuilder()
                .setName(EnvoyTranslator.ROUTER_FILTER)
                .setTypedConfig(com.google.protobuf.Any.pack(Router.getDefaultInstance()))
                .build();
        HttpFilter other =
                HttpFilter.newBuilder().setName("envoy.filters.http.cors").build();
        HttpConnectionManager hcm = HttpConnectionManager.newBuilder()
                .setStatPrefix("x")
                .addHttpFilters(router)
                .addHttpFilters(other)
                .build();
        Filter f = Filter.newBuilder()
                .setName(EnvoyIngressTranslator.HCM_FILTER)
                .setTypedConfig(com.google.protobuf.Any.pack(hcm))
                .build();
        Listener l = Listener.newBuilder()
                .setName("l")
                .addFilterChains(FilterChain.newBuilder().addFilters(f))
                .addFilterChains(FilterChain.newBuilder().addFilters(f))
                .build();
        assertThat(EnvoySemantics.check(EnvoyTranslator.resource(XdsType.LISTENER, "l", l, true)))
                .contains(
                        "listener l: two filter chains have the same match",
                        "x: the router must be the last HTTP filter, and only it");
    }
}
