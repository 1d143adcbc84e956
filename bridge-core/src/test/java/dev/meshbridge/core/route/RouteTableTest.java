package dev.meshbridge.core.route;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class RouteTableTest {

    private static final Instant T0 = Instant.parse("2024-05-01T10:00:00Z");

    private static IngressRef ref(String ns, String name, Instant created) {
        return new IngressRef("kubernetes", ns, name, created);
    }

    private static HttpRoute route(IngressRef owner, String host, String path, String... registryHosts) {
        List<WeightedDestination> ds = java.util.Arrays.stream(registryHosts)
                .map(h -> new WeightedDestination(RegistryDestination.of(h), 100))
                .toList();
        return new HttpRoute(owner, new RouteMatch(host, PathType.PREFIX, path), ds);
    }

    private static IngressRoutes contribution(IngressRef owner, HttpRoute... routes) {
        return new IngressRoutes(owner, List.of(routes), Optional.empty(), List.of());
    }

    @Test
    void merge_sameMatchInTwoIngresses_oldestWinsAndLoserIsReportedWithBothNames() {
        IngressRef older = ref("shop", "orders-v1", T0);
        IngressRef newer = ref("shop", "orders-v2", T0.plusSeconds(60));

        RouteTable table = RouteTable.merge(List.of(
                contribution(newer, route(newer, "shop.example.com", "/orders", "orders-v2.dubbo")),
                contribution(older, route(older, "shop.example.com", "/orders", "orders.dubbo"))));

        assertThat(table.routes()).singleElement().satisfies(r -> {
            assertThat(r.owner()).isEqualTo(older);
            assertThat(r.destinations()).extracting(d -> d.destination().host()).containsExactly("orders.dubbo");
        });
        assertThat(table.conflicts()).singleElement().satisfies(c -> {
            assertThat(c.kind()).isEqualTo(RouteConflict.Kind.ROUTE);
            assertThat(c.claim()).isEqualTo("shop.example.com Prefix /orders");
            assertThat(c.winner()).isEqualTo(older);
            assertThat(c.loser()).isEqualTo(newer);
            assertThat(c.message()).contains("shop/orders-v1").contains("shop/orders-v2");
        });
        assertThat(table.registryHosts()).containsExactly("orders.dubbo");
    }

    @Test
    void subsetLabelKeys_perHost_fromTheServedRoutesSubsets() {
        IngressRef owner = ref("shop", "canary", T0);
        WeightedDestination v1 = new WeightedDestination(
                new RegistryDestination("orders.dubbo", 0, "v1", new TreeMap<>(java.util.Map.of("version", "1.0"))),
                90);
        WeightedDestination v2 = new WeightedDestination(
                new RegistryDestination(
                        "orders.dubbo", 0, "v2", new TreeMap<>(java.util.Map.of("version", "2.0", "zone", "a"))),
                10);
        WeightedDestination plain = new WeightedDestination(RegistryDestination.of("users.dubbo"), 100);
        HttpRoute canary = new HttpRoute(owner, new RouteMatch("", PathType.PREFIX, "/orders"), List.of(v1, v2));
        HttpRoute users = new HttpRoute(owner, new RouteMatch("", PathType.PREFIX, "/users"), List.of(plain));

        RouteTable table = RouteTable.merge(List.of(contribution(owner, canary, users)));

        assertThat(table.subsetLabelKeys()).containsOnlyKeys("orders.dubbo");
        assertThat(table.subsetLabelKeys().get("orders.dubbo")).containsExactly("version", "zone");
        assertThat(RouteTable.empty().subsetLabelKeys()).isEmpty();
    }

    @Test
    void merge_sameCreationTime_namespaceThenNameDecides() {
        IngressRef a = ref("a", "zeta", T0);
        IngressRef b = ref("b", "alpha", T0);

        RouteTable table = RouteTable.merge(
                List.of(contribution(b, route(b, "", "/", "b.dubbo")), contribution(a, route(a, "", "/", "a.dubbo"))));

        assertThat(table.routes()).singleElement().extracting(HttpRoute::owner).isEqualTo(a);
        assertThat(table.conflicts()).extracting(RouteConflict::loser).containsExactly(b);
    }

    @Test
    void merge_differentPathTypeOrHost_noConflict() {
        IngressRef a = ref("ns", "a", T0);
        IngressRef b = ref("ns", "b", T0.plusSeconds(1));
        HttpRoute exact = new HttpRoute(
                b,
                new RouteMatch("shop.example.com", PathType.EXACT, "/orders"),
                List.of(new WeightedDestination(RegistryDestination.of("exact.dubbo"), 1)));

        RouteTable table = RouteTable.merge(List.of(
                contribution(a, route(a, "shop.example.com", "/orders", "prefix.dubbo")),
                contribution(b, exact, route(b, "other.example.com", "/orders", "other.dubbo"))));

        assertThat(table.routes())
                .extracting(r -> r.match().toString())
                .containsExactly(
                        "other.example.com Prefix /orders",
                        "shop.example.com Exact /orders",
                        "shop.example.com Prefix /orders");
        assertThat(table.conflicts()).isEmpty();
    }

    @Test
    void merge_matchDeclaredTwiceInOneIngress_firstIsServed() {
        IngressRef a = ref("ns", "a", T0);

        RouteTable table = RouteTable.merge(
                List.of(contribution(a, route(a, "", "/x", "first.dubbo"), route(a, "", "/x", "second.dubbo"))));

        assertThat(table.routes())
                .singleElement()
                .satisfies(r ->
                        assertThat(r.destinations().get(0).destination().host()).isEqualTo("first.dubbo"));
        assertThat(table.conflicts())
                .singleElement()
                .satisfies(c -> assertThat(c.message())
                        .isEqualTo("route * Prefix /x is declared twice in ns/a; the first one is served"));
    }

    @Test
    void merge_twoDefaultBackends_oldestServed() {
        IngressRef a = ref("ns", "a", T0.plusSeconds(5));
        IngressRef b = ref("ns", "b", T0);
        HttpRoute da = new HttpRoute(
                a,
                IngressRoutes.DEFAULT_BACKEND_MATCH,
                List.of(new WeightedDestination(RegistryDestination.of("a.dubbo"), 1)));
        HttpRoute db = new HttpRoute(
                b,
                IngressRoutes.DEFAULT_BACKEND_MATCH,
                List.of(new WeightedDestination(RegistryDestination.of("b.dubbo"), 1)));

        RouteTable table = RouteTable.merge(List.of(
                new IngressRoutes(a, List.of(), Optional.of(da), List.of()),
                new IngressRoutes(b, List.of(), Optional.of(db), List.of())));

        assertThat(table.defaultBackend()).contains(db);
        assertThat(table.conflicts()).singleElement().satisfies(c -> {
            assertThat(c.kind()).isEqualTo(RouteConflict.Kind.DEFAULT_BACKEND);
            assertThat(c.loser()).isEqualTo(a);
        });
        assertThat(table.registryHosts()).containsExactly("b.dubbo");
    }

    @Test
    void merge_tlsSameSecretForSameHost_noConflict_differentSecret_conflict() {
        IngressRef a = ref("ns", "a", T0);
        IngressRef b = ref("ns", "b", T0.plusSeconds(1));
        IngressRef c = ref("ns", "c", T0.plusSeconds(2));
        TlsMaterial pem = new TlsMaterial("CERT", "KEY");
        SecretRef shared = new SecretRef("ns", "shop-tls");

        RouteTable table = RouteTable.merge(List.of(
                new IngressRoutes(
                        a,
                        List.of(),
                        Optional.empty(),
                        List.of(new TlsEntry(a, List.of("shop.example.com"), shared, Optional.of(pem)))),
                new IngressRoutes(
                        b,
                        List.of(),
                        Optional.empty(),
                        List.of(new TlsEntry(b, List.of("shop.example.com"), shared, Optional.of(pem)))),
                new IngressRoutes(
                        c,
                        List.of(),
                        Optional.empty(),
                        List.of(new TlsEntry(
                                c,
                                List.of("shop.example.com", "www.example.com"),
                                new SecretRef("ns", "other"),
                                Optional.empty())))));

        assertThat(table.tls()).containsOnlyKeys("shop.example.com", "www.example.com");
        assertThat(table.tls().get("shop.example.com").owner()).isEqualTo(a);
        assertThat(table.tls().get("www.example.com").owner()).isEqualTo(c);
        assertThat(table.conflicts()).singleElement().satisfies(conflict -> {
            assertThat(conflict.kind()).isEqualTo(RouteConflict.Kind.TLS);
            assertThat(conflict.claim()).isEqualTo("shop.example.com");
            assertThat(conflict.loser()).isEqualTo(c);
        });
    }

    @Test
    void version_sameContentInAnyOrder_sameVersion() {
        IngressRef a = ref("ns", "a", T0);
        IngressRef b = ref("ns", "b", T0.plusSeconds(1));
        IngressRoutes ca = contribution(a, route(a, "a.example.com", "/", "a.dubbo"));
        IngressRoutes cb = contribution(b, route(b, "b.example.com", "/", "b.dubbo"));

        assertThat(RouteTable.merge(List.of(ca, cb)).version())
                .isEqualTo(RouteTable.merge(List.of(cb, ca)).version())
                .hasSize(16)
                .isNotEqualTo(RouteTable.empty().version());
    }

    @Test
    void version_weightOrSecretRotationChanges_versionChanges() {
        IngressRef a = ref("ns", "a", T0);
        RouteMatch m = new RouteMatch("", PathType.PREFIX, "/");
        RouteTable w1 = RouteTable.merge(List.of(contribution(
                a,
                new HttpRoute(
                        a,
                        m,
                        List.of(
                                new WeightedDestination(RegistryDestination.of("x.dubbo"), 50),
                                new WeightedDestination(RegistryDestination.of("y.dubbo"), 50))))));
        RouteTable w2 = RouteTable.merge(List.of(contribution(
                a,
                new HttpRoute(
                        a,
                        m,
                        List.of(
                                new WeightedDestination(RegistryDestination.of("x.dubbo"), 90),
                                new WeightedDestination(RegistryDestination.of("y.dubbo"), 10))))));
        assertThat(w1.version()).isNotEqualTo(w2.version());

        SecretRef s = new SecretRef("ns", "tls");
        RouteTable t1 = RouteTable.merge(List.of(new IngressRoutes(
                a,
                List.of(),
                Optional.empty(),
                List.of(new TlsEntry(a, List.of("h"), s, Optional.of(new TlsMaterial("C1", "K1")))))));
        RouteTable t2 = RouteTable.merge(List.of(new IngressRoutes(
                a,
                List.of(),
                Optional.empty(),
                List.of(new TlsEntry(a, List.of("h"), s, Optional.of(new TlsMaterial("C2", "K2")))))));
        assertThat(t1.version()).isNotEqualTo(t2.version());
    }

    @Test
    void version_onlyTheLosersRoutesChange_versionUnchanged() {
        IngressRef a = ref("ns", "a", T0);
        IngressRef b = ref("ns", "b", T0.plusSeconds(1));
        IngressRoutes winner = contribution(a, route(a, "", "/", "a.dubbo"));

        RouteTable one = RouteTable.merge(List.of(winner, contribution(b, route(b, "", "/", "b.dubbo"))));
        RouteTable two = RouteTable.merge(List.of(winner, contribution(b, route(b, "", "/", "c.dubbo"))));

        assertThat(one.version()).isEqualTo(two.version());
        assertThat(one.conflicts()).hasSize(1);
    }

    @Test
    void tlsMaterial_toString_neverShowsTheKey() {
        TlsMaterial m = new TlsMaterial("-----BEGIN CERTIFICATE-----", "-----BEGIN PRIVATE KEY-----MIIEvQIBADANBg");
        TlsEntry e = new TlsEntry(ref("ns", "a", T0), List.of("h"), new SecretRef("ns", "s"), Optional.of(m));

        assertThat(e.toString())
                .doesNotContain("MIIEvQIBADANBg")
                .doesNotContain("BEGIN")
                .contains("fingerprint=");
    }

    @Test
    void destinations_invalidValues_refused() {
        assertThatThrownBy(() -> RegistryDestination.of("Orders.DEFAULT_GROUP.nacos"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Orders.DEFAULT_GROUP.nacos");
        assertThatThrownBy(() ->
                        new RegistryDestination("a.dubbo", 0, "", new TreeMap<>(java.util.Map.of("version", "v1"))))
                .hasMessageContaining("subset name");
        assertThatThrownBy(() -> new KubernetesServiceDestination("ns", "web", "web.ns.svc.cluster.local", 80, "http"))
                .hasMessageContaining("port number or name");
        assertThatThrownBy(() -> new HttpRoute(
                        ref("ns", "a", T0),
                        new RouteMatch("", PathType.PREFIX, "/"),
                        List.of(new WeightedDestination(RegistryDestination.of("a.dubbo"), 0))))
                .hasMessageContaining("add up to 0");
    }

    @Test
    void merge_sameOwnerTwice_refused() {
        IngressRef a = ref("ns", "a", T0);
        assertThatThrownBy(() -> RouteTable.merge(List.of(contribution(a), contribution(a))))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void version_rewriteAddedOrChanged_versionChanges_tableWithoutRewriteKeepsItsVersion() {
        IngressRef a = ref("ns", "a", T0);
        HttpRoute plain = route(a, "shop.example.com", "/dubbo", "orders.dubbo");
        HttpRoute prefix =
                new HttpRoute(a, plain.match(), plain.destinations(), Optional.of(PathRewrite.prefix("/api")));
        HttpRoute whole =
                new HttpRoute(a, plain.match(), plain.destinations(), Optional.of(PathRewrite.wholePath("/api")));

        String v0 = RouteTable.merge(List.of(contribution(a, plain))).version();
        String v1 = RouteTable.merge(List.of(contribution(a, prefix))).version();
        String v2 = RouteTable.merge(List.of(contribution(a, whole))).version();

        assertThat(v0).isNotEqualTo(v1).isNotEqualTo(v2);
        assertThat(v1).isNotEqualTo(v2);
        // the three-argument constructor is a route without rewrite
        assertThat(RouteTable.merge(List.of(contribution(a, route(a, "shop.example.com", "/dubbo", "orders.dubbo"))))
                        .version())
                .isEqualTo(v0);
    }

    @Test
    void pathRewrite_trailingSlashOfPrefixDropped_invalidTargetsRefused() {
        assertThat(PathRewrite.prefix("/api/").target()).isEqualTo("/api");
        assertThat(PathRewrite.prefix("/").target()).isEqualTo("/");
        assertThat(PathRewrite.wholePath("/api/").target()).isEqualTo("/api/");
        assertThatThrownBy(() -> PathRewrite.prefix("api")).hasMessageContaining("must start with /");
        assertThatThrownBy(() -> PathRewrite.prefix("/$1")).hasMessageContaining("capture groups");
        assertThatThrownBy(() -> PathRewrite.prefix("/a?b=1")).hasMessageContaining("without query");
        assertThatThrownBy(() -> PathRewrite.prefix("/a b")).hasMessageContaining("spaces");
    }

    @Test
    void servicePort_byNumber_elseFirstHttpFamilyPort_elseFirstPort() {
        var dubbo = new dev.meshbridge.core.model.ServicePort("dubbo", 20880, dev.meshbridge.core.model.Protocol.DUBBO);
        var tri = new dev.meshbridge.core.model.ServicePort("tri", 50051, dev.meshbridge.core.model.Protocol.TRIPLE);

        assertThat(RegistryDestination.of("a.dubbo").servicePort(List.of(dubbo, tri)))
                .contains(tri);
        assertThat(RegistryDestination.of("a.dubbo", 20880).servicePort(List.of(dubbo, tri)))
                .contains(dubbo);
        assertThat(RegistryDestination.of("a.dubbo").servicePort(List.of(dubbo)))
                .contains(dubbo);
        assertThat(RegistryDestination.of("a.dubbo", 9).servicePort(List.of(dubbo, tri)))
                .isEmpty();
        assertThat(RegistryDestination.of("a.dubbo").servicePort(List.of())).isEmpty();
    }
}
