package dev.meshbridge.app.state;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Health;
import dev.meshbridge.core.model.Locality;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.MeshSnapshot;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.spi.ServiceUpsert;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;

/**
 * The last good catalog on disk: {@code catalog.json.gz} in the data directory, a gzip'd JSON document of format
 * {@value #FORMAT}, version {@value #VERSION}.
 *
 * <ol>
 *   <li>{@link #write} replaces the file atomically (a temporary file in the same directory, forced to disk, then
 *       moved over the old one), so a crash leaves the old file or the new one, never half of one;
 *   <li>{@link #read} refuses, with a message naming the file and the problem, anything that is not a complete file of
 *       this format and version (truncated, corrupt, another program's, a future version): such a file is never
 *       served;
 *   <li>what it holds is, per service, the host, ports, labels, endpoints and the registry keys it came from: read
 *       back, it gives the same upserts the registries gave, so when a registry syncs again only real differences
 *       change anything.
 * </ol>
 */
public final class CatalogFile {

    public static final String FILE_NAME = "catalog.json.gz";
    public static final String FORMAT = "meshbridge-catalog";
    public static final int VERSION = 1;

    private static final ObjectMapper JSON =
            new ObjectMapper().disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

    /** The file as written. */
    record Document(
            String format,
            int version,
            long sequence,
            String catalogVersion,
            String writtenAt,
            List<Service> services) {}

    record Service(
            String host, List<Port> ports, Map<String, String> labels, List<Key> sources, List<Instance> endpoints) {}

    record Port(String name, int number, String protocol) {}

    record Key(String registryType, String registry, String namespace, String group, String name, String version) {}

    record Instance(
            String address,
            Map<String, Integer> ports,
            int weight,
            boolean enabled,
            String health,
            Map<String, String> labels,
            String region,
            String zone,
            String subZone) {}

    /** A refused file: what is wrong with it. */
    public static final class RefusedException extends Exception {
        public RefusedException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** What a file holds: when it was written, and the upserts that give its catalog back. */
    public record Loaded(long sequence, String catalogVersion, Instant writtenAt, List<ServiceUpsert> upserts) {}

    private final Path file;

    public CatalogFile(Path directory) {
        this.file = directory.resolve(FILE_NAME);
    }

    public Path path() {
        return file;
    }

    /** Writes the catalog of a snapshot, replacing the file atomically. */
    public void write(MeshSnapshot snapshot, Instant now) throws IOException {
        List<Service> services = new ArrayList<>(snapshot.serviceCount());
        for (MeshService s : snapshot.services().values()) services.add(service(s));
        Document doc = new Document(FORMAT, VERSION, snapshot.sequence(), snapshot.version(), now.toString(), services);
        Files.createDirectories(file.getParent());
        Path tmp = Files.createTempFile(file.getParent(), ".catalog-", ".tmp");
        try {
            try (OutputStream out = new GZIPOutputStream(Files.newOutputStream(tmp), 64 * 1024)) {
                JSON.writeValue(out, doc);
            }
            try (FileChannel c = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
                c.force(true);
            }
            try {
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    /**
     * Reads the file.
     *
     * @return null when there is no file
     * @throws RefusedException when the file is not a complete catalog of this format and version
     */
    public Loaded read() throws RefusedException {
        Document doc;
        try (InputStream in = new GZIPInputStream(Files.newInputStream(file))) {
            doc = JSON.readValue(in, Document.class);
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException | RuntimeException e) {
            throw new RefusedException(
                    file + " is not a readable " + FORMAT + " file (truncated, corrupt or written by another program): "
                            + e.getMessage(),
                    e);
        }
        if (doc == null || !FORMAT.equals(doc.format())) {
            throw new RefusedException(
                    file + " is not a " + FORMAT + " file (format=" + (doc == null ? null : doc.format()) + ")", null);
        }
        if (doc.version() != VERSION) {
            throw new RefusedException(
                    file + " has format version " + doc.version() + "; this bridge reads version " + VERSION, null);
        }
        List<ServiceUpsert> upserts = new ArrayList<>();
        try {
            for (Service s : nonNull(doc.services(), "services")) {
                List<ServicePort> ports = new ArrayList<>();
                for (Port p : nonNull(s.ports(), "ports"))
                    ports.add(new ServicePort(p.name(), p.number(), Protocol.valueOf(p.protocol())));
                List<Endpoint> endpoints = new ArrayList<>();
                for (Instance i : nonNull(s.endpoints(), "endpoints")) endpoints.add(endpoint(i));
                for (Key k : nonNull(s.sources(), "sources")) {
                    ServiceKey key = new ServiceKey(
                            k.registryType(), k.registry(), k.namespace(), k.group(), k.name(), k.version());
                    upserts.add(new ServiceUpsert(
                            key, s.host(), ports, endpoints, new TreeMap<>(nonNull(s.labels(), "labels"))));
                }
            }
            return new Loaded(doc.sequence(), doc.catalogVersion(), Instant.parse(doc.writtenAt()), upserts);
        } catch (RuntimeException e) {
            throw new RefusedException(file + " holds an invalid entry: " + e.getMessage(), e);
        }
    }

    private static <T> T nonNull(T value, String field) {
        if (value == null) throw new IllegalArgumentException("field '" + field + "' is missing");
        return value;
    }

    private static Service service(MeshService s) {
        List<Port> ports = new ArrayList<>();
        for (ServicePort p : s.ports())
            ports.add(new Port(p.name(), p.number(), p.protocol().name()));
        List<Key> sources = new ArrayList<>();
        for (ServiceKey k : s.sources()) {
            sources.add(new Key(k.registryType(), k.registry(), k.namespace(), k.group(), k.name(), k.version()));
        }
        List<Instance> endpoints = new ArrayList<>();
        for (Endpoint e : s.endpoints()) {
            endpoints.add(new Instance(
                    e.address(),
                    new TreeMap<>(e.ports()),
                    e.weight(),
                    e.enabled(),
                    e.health().name(),
                    new TreeMap<>(e.labels()),
                    e.locality().region(),
                    e.locality().zone(),
                    e.locality().subZone()));
        }
        return new Service(s.host(), ports, new TreeMap<>(s.labels()), sources, endpoints);
    }

    private static Endpoint endpoint(Instance i) {
        Endpoint.Builder b = Endpoint.builder(i.address())
                .weight(i.weight())
                .enabled(i.enabled())
                .health(Health.valueOf(i.health()))
                .labels(nonNull(i.labels(), "labels"))
                .locality(new Locality(
                        nonNull(i.region(), "region"), nonNull(i.zone(), "zone"), nonNull(i.subZone(), "subZone")));
        nonNull(i.ports(), "ports").forEach(b::port);
        return b.build();
    }
}
