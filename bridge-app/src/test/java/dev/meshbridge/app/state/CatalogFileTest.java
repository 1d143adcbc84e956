package dev.meshbridge.app.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Health;
import dev.meshbridge.core.model.Locality;
import dev.meshbridge.core.model.MeshSnapshot;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.spi.ServiceUpsert;
import dev.meshbridge.core.testing.TestCatalog;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The last good catalog on disk: written atomically, read back as the same upserts, anything else refused. */
class CatalogFileTest {

    @TempDir
    Path dir;

    private static ServiceUpsert orders() {
        return new ServiceUpsert(
                new ServiceKey("zookeeper", "zk", "prod", "g1", "orders", "1.0.0"),
                "orders.services.zookeeper",
                List.of(new ServicePort("http", 8080, Protocol.HTTP), new ServicePort("grpc", 9090, Protocol.GRPC)),
                List.of(
                        Endpoint.builder("10.0.0.1")
                                .port("http", 8080)
                                .port("grpc", 9090)
                                .weight(7)
                                .label("version", "v1")
                                .locality(new Locality("eu", "eu-1a", "rack-3"))
                                .build(),
                        Endpoint.builder("10.0.0.2")
                                .port("http", 8080)
                                .enabled(false)
                                .health(Health.UNHEALTHY)
                                .build()),
                new TreeMap<>(Map.of("team", "shop")));
    }

    @Test
    void written_thenRead_givesTheSameUpserts_soAResyncChangesNothing() throws Exception {
        MeshSnapshot snapshot;
        try (TestCatalog catalog = new TestCatalog()) {
            catalog.aggregator().accept(orders());
            snapshot = catalog.snapshot();
        }
        CatalogFile file = new CatalogFile(dir);
        file.write(snapshot, Instant.parse("2026-01-01T00:00:00Z"));

        CatalogFile.Loaded loaded = file.read();
        assertThat(loaded.sequence()).isEqualTo(snapshot.sequence());
        assertThat(loaded.catalogVersion()).isEqualTo(snapshot.version());
        assertThat(loaded.upserts()).singleElement().satisfies(u -> {
            ServiceUpsert o = orders();
            assertThat(u.key()).isEqualTo(o.key());
            assertThat(u.host()).isEqualTo(o.host());
            assertThat(u.ports()).containsExactlyInAnyOrderElementsOf(o.ports());
            assertThat(u.endpoints()).containsExactlyInAnyOrderElementsOf(o.endpoints());
            assertThat(u.labels()).isEqualTo(o.labels());
        });
        try (var files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactly(CatalogFile.FILE_NAME);
        }
    }

    @Test
    void noFile_isNotAnError() throws Exception {
        assertThat(new CatalogFile(dir).read()).isNull();
    }

    @Test
    void truncatedFile_isRefused_namingTheFile() throws Exception {
        try (TestCatalog catalog = new TestCatalog()) {
            catalog.aggregator().accept(orders());
            new CatalogFile(dir).write(catalog.snapshot(), Instant.now());
        }
        Path path = dir.resolve(CatalogFile.FILE_NAME);
        byte[] all = Files.readAllBytes(path);
        Files.write(path, Arrays.copyOf(all, all.length / 2));

        assertThatThrownBy(() -> new CatalogFile(dir).read())
                .isInstanceOf(CatalogFile.RefusedException.class)
                .hasMessageContaining(path.toString())
                .hasMessageContaining("truncated, corrupt or written by another program");
    }

    @Test
    void foreignOrFutureFile_isRefused() throws Exception {
        gzip("{\"format\":\"something-else\",\"version\":1,\"services\":[]}");
        assertThatThrownBy(() -> new CatalogFile(dir).read())
                .isInstanceOf(CatalogFile.RefusedException.class)
                .hasMessageContaining("is not a meshbridge-catalog file (format=something-else)");

        gzip("{\"format\":\"meshbridge-catalog\",\"version\":2,\"services\":[]}");
        assertThatThrownBy(() -> new CatalogFile(dir).read())
                .hasMessageContaining("has format version 2; this bridge reads version 1");

        Files.writeString(dir.resolve(CatalogFile.FILE_NAME), "plain text, not gzip");
        assertThatThrownBy(() -> new CatalogFile(dir).read()).isInstanceOf(CatalogFile.RefusedException.class);
    }

    @Test
    void anInvalidEntry_refusesTheWholeFile() throws Exception {
        gzip("""
                {"format":"meshbridge-catalog","version":1,"sequence":3,"catalogVersion":"x",
                 "writtenAt":"2026-01-01T00:00:00Z","services":[{"host":"Not_A_Host","ports":[],"labels":{},
                 "sources":[{"registryType":"zookeeper","registry":"zk","name":"a"}],"endpoints":[]}]}
                """);
        assertThatThrownBy(() -> new CatalogFile(dir).read())
                .isInstanceOf(CatalogFile.RefusedException.class)
                .hasMessageContaining("holds an invalid entry")
                .hasMessageContaining("Not_A_Host");
    }

    private void gzip(String json) throws Exception {
        try (OutputStream out = new GZIPOutputStream(Files.newOutputStream(dir.resolve(CatalogFile.FILE_NAME)))) {
            out.write(json.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
    }
}
