package dev.meshbridge.core.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A directory laid out as the kubelet lays out a Secret volume: the data in a timestamped directory, a {@code ..data}
 * symlink to it, and one symlink per key ({@code tls.crt -> ..data/tls.crt}). {@link #publish} swaps {@code ..data}
 * atomically to a new directory, as the kubelet does when the Secret changes.
 */
public final class SecretVolume {

    private final Path dir;
    private final AtomicInteger versions = new AtomicInteger();

    public SecretVolume(Path dir) {
        this.dir = dir;
    }

    /** The path a container reads, e.g. {@code <dir>/tls.crt}. */
    public Path file(String key) {
        return dir.resolve(key);
    }

    /** Writes a new version of every key and swaps {@code ..data} to it. */
    public void publish(Map<String, String> files) {
        try {
            Files.createDirectories(dir);
            Path version = dir.resolve("..v" + versions.incrementAndGet());
            Files.createDirectories(version);
            for (var e : files.entrySet())
                Files.writeString(version.resolve(e.getKey()), e.getValue(), StandardCharsets.US_ASCII);
            Path tmpLink = dir.resolve("..data_tmp");
            Files.deleteIfExists(tmpLink);
            Files.createSymbolicLink(tmpLink, version.getFileName());
            Files.move(
                    tmpLink,
                    dir.resolve("..data"),
                    StandardCopyOption.ATOMIC_MOVE,
                    StandardCopyOption.REPLACE_EXISTING);
            for (String key : files.keySet()) {
                Path link = dir.resolve(key);
                if (!Files.isSymbolicLink(link)) Files.createSymbolicLink(link, Path.of("..data", key));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Publishes a certificate chain, its key and a CA bundle under the keys a kubernetes.io/tls Secret uses. */
    public void publish(TestPki.Issued issued, TestPki ca) {
        publish(Map.of(
                "tls.crt",
                TestPki.pem(issued.certificate()) + TestPki.pem(issued.issuer()),
                "tls.key",
                TestPki.pem(issued.keyPair().getPrivate()),
                "ca.crt",
                TestPki.pem(ca.certificate())));
    }
}
