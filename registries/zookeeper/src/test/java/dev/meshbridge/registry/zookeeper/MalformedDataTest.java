package dev.meshbridge.registry.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.MeshService;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Garbage in ZooKeeper: malformed provider URLs and instance JSON written next to good entries. Each bad entry is
 * skipped and counted, the good ones are served, and the watcher keeps following changes.
 */
class MalformedDataTest {

    private static ZkServer zk;
    private static CuratorFramework raw;

    @BeforeAll
    static void start() throws Exception {
        zk = new ZkServer();
        raw = zk.client();
    }

    @AfterAll
    static void stop() throws Exception {
        raw.close();
        zk.close();
    }

    private static void provider(String iface, String znodeName) throws Exception {
        raw.create().creatingParentsIfNeeded().forPath("/dubbo/" + iface + "/providers/" + znodeName);
    }

    private static String encoded(String url) {
        return URLEncoder.encode(url, StandardCharsets.UTF_8);
    }

    private static void instance(String service, String id, String json) throws Exception {
        raw.create()
                .creatingParentsIfNeeded()
                .forPath("/services/" + service + "/" + id, json.getBytes(StandardCharsets.UTF_8));
    }

    static String springJson(String address, String port) {
        return "{\"name\":\"svc\",\"id\":\"x\",\"address\":\"" + address + "\",\"port\":" + port
                + ",\"sslPort\":null,\"payload\":{\"@class\":\"org.springframework.cloud.zookeeper.discovery"
                + ".ZookeeperInstance\",\"id\":\"svc\",\"name\":\"svc\",\"metadata\":{}},\"registrationTimeUTC\":1,"
                + "\"serviceType\":\"DYNAMIC\",\"uriSpec\":null}";
    }

    @Test
    void malformedUrlsAndJson_areSkippedAndCounted_goodEntriesServed_andWatchingGoesOn() throws Exception {
        String iface = "org.demo.Bad";
        provider(iface, "not-a-url");
        provider(iface, encoded("dubbo://10.0.10.1:abc/" + iface + "?application=x"));
        provider(iface, encoded("dubbo://10.0.10.2:70000/" + iface + "?application=x"));
        provider(iface, encoded("dubbo://10.0.10.3:20880/" + iface + "?weight=heavy"));
        provider(iface, "dubbo%3A%2F%2F10.0.10.4%3A20880%2F%ZZ");
        provider(iface, encoded("dubbo://10.0.10.9:20880/" + iface + "?application=good"));

        instance("broken", "a", "{garbage");
        instance("broken", "b", springJson("10.0.11.1", "\"abc\""));
        instance("broken", "c", springJson("10.0.11.2", "99999"));
        instance("broken", "d", "[1,2,3]");
        instance(
                "broken",
                "e",
                "{\"address\":\"10.0.11.4\",\"port\":20880,\"payload\":{\"metadata\":"
                        + "{\"dubbo.endpoints\":\"[{nope\",\"dubbo.metadata.revision\":\"r1\"}}}");
        instance("broken", "f", "");
        instance("broken", "g", springJson("10.0.11.9", "8080"));

        try (WatcherHarness h = WatcherHarness.start(zk.address())) {
            h.awaitSyncs(1);
            assertThat(h.snapshot().service("org.demo.bad.dubbo").endpoints())
                    .extracting(Endpoint::address)
                    .containsExactly("10.0.10.9");
            assertThat(h.snapshot().service("broken.services.zookeeper").endpoints())
                    .extracting(Endpoint::address)
                    .containsExactly("10.0.11.9");
            assertThat(h.status.skippedCount()).isEqualTo(11);

            // more garbage later, also over a good instance: skipped, and the catalog keeps what it had
            long version = h.snapshot().versionSum();
            provider(iface, encoded("dubbo://:20880/" + iface));
            raw.setData().forPath("/services/broken/g", "}{".getBytes(StandardCharsets.UTF_8));
            org.awaitility.Awaitility.await().atMost(ZkServer.timeout()).until(() -> h.status.skippedCount() == 13);
            assertThat(h.snapshot().versionSum()).isEqualTo(version);
            assertThat(h.snapshot().service("broken.services.zookeeper").endpoints())
                    .extracting(Endpoint::address)
                    .containsExactly("10.0.11.9");

            // and good changes still flow, including a bad entry fixed in place
            provider(iface, encoded("dubbo://10.0.10.10:20880/" + iface + "?application=good"));
            raw.setData()
                    .forPath(
                            "/services/broken/b",
                            springJson("10.0.11.1", "8080").getBytes(StandardCharsets.UTF_8));
            h.awaitService("org.demo.bad.dubbo", s -> s.endpoints().size() == 2);
            h.awaitService(
                    "broken.services.zookeeper",
                    s -> s.endpoints().stream()
                            .map(Endpoint::address)
                            .toList()
                            .equals(java.util.List.of("10.0.11.1", "10.0.11.9")));
            assertThat(h.status.state()).isEqualTo(dev.meshbridge.core.spi.RegistryStatus.State.UP);
        }
    }

    /** A Spring Cloud instance under the chroot {@code /hostile}. */
    private static void hostile(String service, String id, String json) throws Exception {
        raw.create()
                .creatingParentsIfNeeded()
                .forPath("/hostile/services/" + service + "/" + id, json.getBytes(StandardCharsets.UTF_8));
    }

    /** A Spring Cloud instance whose metadata is this JSON object. */
    private static String springJson(String address, int port, String metadata) {
        return springJson(address, Integer.toString(port)).replace("\"metadata\":{}", "\"metadata\":" + metadata);
    }

    @Test
    void hostileInstances_tenThousandLabelsAreBounded_broadcastAddressesLeftOut_servicesPastTheLimitWait()
            throws Exception {
        StringBuilder wide = new StringBuilder("{");
        for (int i = 0; i <= 10_000; i++)
            wide.append(i == 0 ? "" : ",").append("\"k").append(i).append("\":\"v\"");
        wide.append('}');
        hostile("wide", "a", springJson("10.0.12.1", 8080, wide.toString()));
        hostile("bcast", "b", springJson("255.255.255.255", 8080, "{}"));
        hostile("bcast", "c", springJson("10.0.12.3", 8080, "{}"));
        hostile("bcast", "d", springJson("224.0.0.1", 8080, "{}"));

        try (WatcherHarness h = WatcherHarness.start(zk.address(), "chroot: /hostile", "limits: {maxServices: 2}")) {
            h.awaitSyncs(1);
            System.out.println("SNAPSHOT " + h.snapshot().services().keySet() + " skipped=" + h.status.skippedCount()
                    + " err=" + h.status.lastError());
            MeshService w = h.snapshot().service("wide.services.zookeeper");
            assertThat(w.endpoints()).hasSize(1);
            assertThat(w.endpoints().get(0).labels().size())
                    .as("labels kept of 10,001")
                    .isLessThanOrEqualTo(dev.meshbridge.core.config.RegistryLimits.DEFAULTS.maxLabelsPerInstance());
            assertThat(h.status.droppedLabelCount())
                    .as("every label left out is counted")
                    .isGreaterThanOrEqualTo(
                            10_001 - w.endpoints().get(0).labels().size());
            assertThat(h.snapshot().service("bcast.services.zookeeper").endpoints())
                    .extracting(Endpoint::address)
                    .containsExactly("10.0.12.3");
            long skipped = h.status.skippedCount();
            assertThat(skipped).as("the broadcast and multicast instances").isEqualTo(2);

            // a third service passes maxServices: left out and reported, the two others served
            hostile("third", "e", springJson("10.0.12.5", 8080, "{}"));
            await().atMost(ZkServer.timeout()).until(() -> h.status.skippedCount() > skipped);
            assertThat(h.snapshot().service("third.services.zookeeper")).isNull();
            assertThat(h.snapshot().service("wide.services.zookeeper")).isNotNull();

            // room again: it comes in
            raw.delete().deletingChildrenIfNeeded().forPath("/hostile/services/bcast");
            h.awaitService("third.services.zookeeper", s -> s.endpoints().size() == 1);
        }
    }
}
