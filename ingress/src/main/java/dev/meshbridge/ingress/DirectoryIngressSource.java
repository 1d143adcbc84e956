package dev.meshbridge.ingress;

import dev.meshbridge.core.route.IngressRef;
import dev.meshbridge.core.route.IngressRoutes;
import dev.meshbridge.core.route.SecretRef;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.networking.v1.Ingress;
import io.fabric8.kubernetes.api.model.networking.v1.IngressClass;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads Ingresses, IngressClasses and TLS Secrets from a directory of YAML files ({@code *.yaml}, {@code *.yml}; one
 * level, hidden files skipped, symbolic links followed, so a mounted ConfigMap works) and hands the routes to the
 * {@link RouteTablePublisher}: the same feature as in a cluster, for docker-compose and bare-metal users.
 *
 * <ol>
 *   <li>files are compared by content every reload interval; only a changed file is parsed again;
 *   <li>a file with any problem (syntax, structure, an Ingress that does not translate, a broken TLS Secret) is
 *       refused as a whole with every problem logged as {@code file:line: field: message}; its last valid version
 *       stays in effect, and the other files are not affected;
 *   <li>a removed file removes its objects; an unreadable file or directory keeps the last state;
 *   <li>the same IngressClass rules as in a cluster apply, except that an Ingress without any class is accepted;
 *   <li>an object defined in two files: the file whose name sorts first wins, the other is logged;
 *   <li>one thread owns the state; issues (TLS, conflicts, unknown destinations) go to the log through the {@link
 *       IssueTracker}.
 * </ol>
 */
public final class DirectoryIngressSource implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(DirectoryIngressSource.class);

    public static final String SOURCE = "directory";
    static final String WARNING_CATEGORY = "directory-warnings";

    private final Path directory;
    private final Duration interval;
    private final RouteTablePublisher publisher;
    private final IssueTracker issues;
    private final IngressTranslator translator;
    private final IngressClassFilter filter;
    private final ScheduledExecutorService executor;
    private final AtomicBoolean started = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Counter applied;
    private final Counter refused;
    private final Map<Path, List<String>> refusedFiles = new java.util.concurrent.ConcurrentSkipListMap<>();

    // --- owned by the executor thread ---
    private final Map<Path, FileState> files = new TreeMap<>();
    private final Set<String> duplicatesLogged = new HashSet<>();
    private boolean directoryMissingLogged;
    private boolean scannedOnce;

    private static final class FileState {
        byte[] content;
        ManifestFile.Parsed good;
        String readError;
    }

    public DirectoryIngressSource(
            Path directory,
            Duration interval,
            IngressOptions options,
            RouteTablePublisher publisher,
            IssueTracker issues,
            MeterRegistry meters) {
        this.directory = directory;
        this.interval = interval;
        this.publisher = publisher;
        this.issues = issues;
        this.translator = new IngressTranslator(SOURCE, options.clusterDomain());
        this.filter = new IngressClassFilter(options.ingressClass(), options.controllerName());
        this.executor = Executors.newSingleThreadScheduledExecutor(Threads.daemon("meshbridge-ingress-directory"));
        this.applied = Counter.builder("meshbridge.ingress.directory.files")
                .tag("result", "applied")
                .description("Ingress files read from the directory source, by result")
                .register(meters);
        this.refused = Counter.builder("meshbridge.ingress.directory.files")
                .tag("result", "refused")
                .description("Ingress files read from the directory source, by result")
                .register(meters);
    }

    /** Reads the directory now and then every interval. */
    public void start() {
        if (!started.compareAndSet(false, true)) throw new IllegalStateException("already started");
        publisher.expectSource(SOURCE);
        executor.scheduleWithFixedDelay(this::scanSafely, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void scanSafely() {
        try {
            scan();
        } catch (RuntimeException e) {
            log.error("ingress directory={} scan failed; keeping the last state", directory, e);
        }
    }

    private void scan() {
        List<Path> present;
        try (Stream<Path> s = Files.list(directory)) {
            present = s.filter(DirectoryIngressSource::isManifest).sorted().toList();
            directoryMissingLogged = false;
        } catch (IOException e) {
            if (!directoryMissingLogged) {
                directoryMissingLogged = true;
                log.warn("ingress directory={} cannot be listed, keeping the last state: {}", directory, e.toString());
            }
            return;
        }
        boolean changed = !scannedOnce;
        scannedOnce = true;
        for (Path gone : List.copyOf(files.keySet())) {
            if (!present.contains(gone)) {
                files.remove(gone);
                refusedFiles.remove(gone);
                log.info("ingress file={} removed", gone);
                changed = true;
            }
        }
        for (Path file : present) changed |= read(file);
        if (changed) rebuild();
    }

    private static boolean isManifest(Path p) {
        String name = p.getFileName().toString();
        return !name.startsWith(".") && (name.endsWith(".yaml") || name.endsWith(".yml")) && Files.isRegularFile(p);
    }

    /** Reads one file; true when what it contributes changed. */
    private boolean read(Path file) {
        FileState state = files.computeIfAbsent(file, f -> new FileState());
        byte[] content;
        try {
            content = Files.readAllBytes(file);
        } catch (IOException e) {
            String error = e.toString();
            if (!error.equals(state.readError)) {
                state.readError = error;
                log.warn("ingress file={} cannot be read, keeping its last valid version: {}", file, error);
            }
            return false;
        }
        state.readError = null;
        if (Arrays.equals(content, state.content)) return false;
        state.content = content;
        try {
            ManifestFile.Parsed parsed =
                    ManifestFile.parse(file.toString(), new String(content, StandardCharsets.UTF_8), translator);
            if (isEmpty(parsed) && state.good != null && !isEmpty(state.good)) {
                // an editor's save, a ConfigMap update or a copy caught half way looks like this: keep what it had
                refused.increment();
                refusedFiles.put(
                        file,
                        List.of(file + ": the file is empty (no object) where it had "
                                + ManifestFile.summary(state.good) + "; delete the file to remove its objects"));
                log.error(
                        "ingress file={} refused: it is empty now, its last valid version ({}) stays in effect; delete"
                                + " the file to remove its objects",
                        file,
                        ManifestFile.summary(state.good));
                return false;
            }
            state.good = parsed;
            refusedFiles.remove(file);
            applied.increment();
            log.info("ingress file={} applied: {}", file, ManifestFile.summary(parsed));
            return true;
        } catch (ManifestFile.RefusedException e) {
            refused.increment();
            refusedFiles.put(file, e.problems());
            log.error(
                    "ingress file={} refused, {}; {} problem(s):\n  {}",
                    file,
                    state.good == null ? "it contributes nothing" : "its last valid version stays in effect",
                    e.problems().size(),
                    String.join("\n  ", e.problems()));
            return false;
        }
    }

    private static boolean isEmpty(ManifestFile.Parsed p) {
        return p.ingresses().isEmpty() && p.classes().isEmpty() && p.secrets().isEmpty();
    }

    private void rebuild() {
        List<IngressClass> classes = new ArrayList<>();
        Map<SecretRef, Secret> secrets = new HashMap<>();
        Map<String, Ingress> ingresses = new LinkedHashMap<>();
        for (Map.Entry<Path, FileState> e : files.entrySet()) {
            ManifestFile.Parsed p = e.getValue().good;
            if (p == null) continue;
            classes.addAll(p.classes());
            for (Secret s : p.secrets()) {
                SecretRef ref = new SecretRef(
                        s.getMetadata().getNamespace(), s.getMetadata().getName());
                if (secrets.putIfAbsent(ref, s) != null) duplicate(e.getKey(), "Secret " + ref);
            }
            for (Ingress i : p.ingresses()) {
                String key =
                        i.getMetadata().getNamespace() + "/" + i.getMetadata().getName();
                if (ingresses.putIfAbsent(key, i) != null) duplicate(e.getKey(), "Ingress " + key);
            }
        }
        Map<IngressRef, List<Issue>> warnings = new HashMap<>();
        Set<IngressRef> live = new HashSet<>();
        List<IngressRoutes> contributions = new ArrayList<>();
        for (Ingress ingress : ingresses.values()) {
            if (!filter.accepts(ingress, classes, true)) {
                log.debug(
                        "ingress={} belongs to another IngressClass; ignored",
                        ingress.getMetadata().getName());
                continue;
            }
            IngressTranslator.Translation t = translator.translate(ingress);
            if (!t.accepted()) continue; // cannot happen: the file was checked
            live.add(t.ref());
            t.addWarnings(warnings);
            contributions.add(TlsSecrets.withTls(
                    t.routes().orElseThrow(),
                    ref -> Optional.of(Optional.ofNullable(secrets.get(ref))),
                    t.ref(),
                    warnings));
        }
        issues.update(WARNING_CATEGORY, warnings, live);
        publisher.update(SOURCE, contributions);
    }

    /** The files whose current content is refused, with their problems ({@code file:line: field: message}). */
    public Map<Path, List<String>> refusedFiles() {
        return Map.copyOf(refusedFiles);
    }

    private void duplicate(Path file, String what) {
        if (duplicatesLogged.add(file + " " + what)) {
            log.warn("ingress file={} defines {} again; the one from the first file (by name) is used", file, what);
        }
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) return;
        executor.shutdownNow();
        try {
            executor.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
