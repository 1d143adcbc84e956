package dev.meshbridge.registry.nacos;

import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.config.Secret;
import dev.meshbridge.core.dubbo.DubboNaming;
import dev.meshbridge.core.naming.HostTemplate;
import dev.meshbridge.core.tls.TlsFiles;
import java.net.URI;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * The options of one {@code type: nacos} registry, shaped like Higress's McpBridge Nacos fields.
 *
 * @param namespaceIds namespace ids to watch ({@code nacosNamespaceId}); empty when {@code allNamespaces}
 * @param allNamespaces {@code nacosNamespaceId: "*"}: every namespace the server lists, followed as they come and go
 * @param namespaceName {@code nacosNamespace}: the namespace as written in hosts (Higress); empty to use the id
 * @param groups groups to watch ({@code nacosGroups}); empty when {@code allGroups}
 * @param allGroups {@code nacosGroups: ["*"]}: every group
 * @param refreshInterval how often the service list is read again ({@code nacosRefreshInterval})
 * @param allow glob patterns a service name must match, empty for all ({@code serviceAllowlist})
 * @param deny glob patterns that exclude a service name ({@code serviceDenylist})
 * @param username {@code nacosUsername}, or null
 * @param password {@code nacosPassword}, or null
 * @param accessKey {@code nacosAccessKey}, or null
 * @param secretKey {@code nacosSecretKey}, or null
 * @param contextPath the server's web context ({@code nacosContextPath}), e.g. {@code /nacos}
 * @param addressServer an address server URL that lists the Nacos servers ({@code nacosAddressServer}), or null
 * @param timeout timeout of one request to Nacos ({@code nacosTimeout})
 * @param fuzzyWatch whether to ask Nacos 3 servers to push new services ({@code nacosFuzzyWatch})
 * @param hostTemplate host naming of ordinary services ({@code hostTemplate})
 * @param dubboInterfaceTemplate host naming of Dubbo interface-level services ({@code dubboInterfaceHostTemplate})
 * @param dubboApplicationTemplate host naming of Dubbo 3 application-level services
 *     ({@code dubboApplicationHostTemplate})
 * @param dubboConsumerApplication the Dubbo consumer application the bridge stands for when it applies override rules
 *     ({@code dubboConsumerApplication}), or null for none
 * @param tls TLS to Nacos ({@code tls}), or null for plaintext
 */
public record NacosOptions(
        List<String> namespaceIds,
        boolean allNamespaces,
        String namespaceName,
        List<String> groups,
        boolean allGroups,
        Duration refreshInterval,
        List<String> allow,
        List<String> deny,
        Secret username,
        Secret password,
        Secret accessKey,
        Secret secretKey,
        String contextPath,
        AddressServer addressServer,
        Duration timeout,
        boolean fuzzyWatch,
        HostTemplate hostTemplate,
        HostTemplate dubboInterfaceTemplate,
        HostTemplate dubboApplicationTemplate,
        String dubboConsumerApplication,
        Tls tls) {

    /**
     * TLS to Nacos: the CA that signs the servers' certificates and an optional client certificate (mTLS), for
     * nacos-client's gRPC connection ({@code grpc}) and for the HTTP API the watcher calls itself ({@code http}).
     *
     * @param files {@code caFile} (required: nacos-client's gRPC TLS has no "JVM's CAs" mode), {@code certFile},
     *     {@code keyFile}, {@code keyPassword}
     * @param http the watcher's HTTP calls (login, namespace and service lists) go to {@code https://}
     * @param grpc nacos-client's gRPC connection (HTTP port + 1000) uses TLS
     * @param reloadInterval how often, at most, the HTTP calls check the files for a change (when a connection
     *     opens); nacos-client reads them again for every gRPC connection it opens
     */
    public record Tls(TlsFiles files, boolean http, boolean grpc, Duration reloadInterval) {
        public static final Duration DEFAULT_RELOAD = Duration.ofSeconds(10);

        public Tls {
            Objects.requireNonNull(files, "files");
            Objects.requireNonNull(reloadInterval, "reloadInterval");
        }

        /** Both channels, the default reload interval. */
        public static Tls of(TlsFiles files) {
            return new Tls(files, true, true, DEFAULT_RELOAD);
        }
    }

    /** Nacos's public namespace: its id on 2.x and 3.x servers. */
    public static final String PUBLIC_NAMESPACE = "public";

    public static final String DEFAULT_GROUP = "DEFAULT_GROUP";
    public static final String DEFAULT_HOST_TEMPLATE = "{service}.{group}.{namespace}.nacos";
    public static final String DEFAULT_CONTEXT_PATH = "/nacos";
    public static final Duration DEFAULT_REFRESH = Duration.ofSeconds(1);
    public static final Duration MIN_REFRESH = Duration.ofMillis(100);
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(3);

    /** Variables of {@link #hostTemplate()}. */
    public static final Set<String> HOST_VARIABLES = Set.of("service", "group", "namespace", "namespaceId", "registry");

    /**
     * An address server (Nacos's {@code endpoint}): {@code GET http://host:port/path/serverlist} returns the servers.
     *
     * @param host host
     * @param port port (8080 when the URL has none, as in nacos-client)
     * @param contextPath path before {@code /serverlist}, e.g. {@code /nacos}; empty for none
     */
    public record AddressServer(String host, int port, String contextPath) {}

    public NacosOptions {
        namespaceIds = List.copyOf(namespaceIds);
        groups = List.copyOf(groups);
        allow = List.copyOf(allow);
        deny = List.copyOf(deny);
        Objects.requireNonNull(refreshInterval, "refreshInterval");
        Objects.requireNonNull(contextPath, "contextPath");
        Objects.requireNonNull(timeout, "timeout");
        Objects.requireNonNull(hostTemplate, "hostTemplate");
        Objects.requireNonNull(dubboInterfaceTemplate, "dubboInterfaceTemplate");
        Objects.requireNonNull(dubboApplicationTemplate, "dubboApplicationTemplate");
        namespaceName = Objects.requireNonNullElse(namespaceName, "");
    }

    /** Defaults: the public namespace, {@code DEFAULT_GROUP}, no credentials. */
    public static NacosOptions defaults() {
        return new NacosOptions(
                List.of(PUBLIC_NAMESPACE),
                false,
                "",
                List.of(DEFAULT_GROUP),
                false,
                DEFAULT_REFRESH,
                List.of(),
                List.of(),
                null,
                null,
                null,
                null,
                DEFAULT_CONTEXT_PATH,
                null,
                DEFAULT_TIMEOUT,
                true,
                HostTemplate.parse(DEFAULT_HOST_TEMPLATE, HOST_VARIABLES),
                DubboNaming.interfaceTemplate(null),
                DubboNaming.applicationTemplate(null),
                null,
                null);
    }

    /**
     * The namespace whose Dubbo services are the home environment (no {@code {env}} in their hosts): {@code public}
     * when it is watched (listed, or with {@code "*"}), else the first namespace listed.
     */
    public String homeNamespace() {
        if (allNamespaces || namespaceIds.contains(PUBLIC_NAMESPACE)) return PUBLIC_NAMESPACE;
        return namespaceIds.get(0);
    }

    /** The home group: {@code DEFAULT_GROUP} when it is watched (listed, or with {@code ["*"]}), else the first listed. */
    public String homeGroup() {
        if (allGroups || groups.contains(DEFAULT_GROUP)) return DEFAULT_GROUP;
        return groups.get(0);
    }

    /** The namespace value hosts use for a namespace id: {@code nacosNamespace} when given, else the id. */
    public String namespaceInHost(String namespaceId) {
        return namespaceName.isEmpty() ? namespaceId : namespaceName;
    }

    public boolean hasCredentials() {
        return username != null;
    }

    /** Parses the Nacos fields of one {@code registries[]} entry; problems are recorded on {@code entry}. */
    public static NacosOptions parse(ConfigNode entry) {
        NacosOptions d = defaults();

        List<String> ids = entry.has("nacosNamespaceId") ? entry.strings("nacosNamespaceId") : List.of();
        boolean allNamespaces = ids.contains("*");
        if (allNamespaces && ids.size() > 1) {
            entry.problem("nacosNamespaceId", "'*' (all namespaces) cannot be combined with namespace ids");
        }
        List<String> namespaceIds = allNamespaces ? List.of() : distinct(ids, s -> s.isEmpty() ? PUBLIC_NAMESPACE : s);
        if (!allNamespaces && namespaceIds.isEmpty()) namespaceIds = d.namespaceIds();
        String namespaceName = entry.string("nacosNamespace", "");
        if (!namespaceName.isEmpty() && (allNamespaces || namespaceIds.size() > 1)) {
            entry.problem(
                    "nacosNamespace",
                    "names the namespace in hosts, so it needs exactly one nacosNamespaceId; with several, hosts use"
                            + " each namespace id");
        }

        List<String> groupList = entry.has("nacosGroups") ? entry.strings("nacosGroups") : List.of();
        boolean allGroups = groupList.contains("*");
        if (allGroups && groupList.size() > 1) {
            entry.problem("nacosGroups", "'*' (all groups) cannot be combined with group names");
        }
        List<String> groups = allGroups ? List.of() : distinct(groupList, Function.identity());
        if (!allGroups && groups.isEmpty()) groups = d.groups();

        Duration refresh = entry.duration("nacosRefreshInterval", DEFAULT_REFRESH, ChronoUnit.NANOS);
        if (refresh.compareTo(MIN_REFRESH) < 0) {
            entry.problem("nacosRefreshInterval", "must be at least " + MIN_REFRESH.toMillis() + "ms, got " + refresh);
            refresh = DEFAULT_REFRESH;
        }
        Duration timeout = entry.duration("nacosTimeout", DEFAULT_TIMEOUT, ChronoUnit.MILLIS);
        if (timeout.isZero() || timeout.isNegative()) {
            entry.problem("nacosTimeout", "must be positive");
            timeout = DEFAULT_TIMEOUT;
        }

        List<String> allow = entry.strings("serviceAllowlist");
        List<String> deny = entry.strings("serviceDenylist");
        for (String p : allow) if (p.isEmpty()) entry.problem("serviceAllowlist", "patterns must not be empty");
        for (String p : deny) if (p.isEmpty()) entry.problem("serviceDenylist", "patterns must not be empty");

        Secret[] credentials = secretPair(entry, "nacosUsername", "nacosPassword");
        Secret username = credentials[0];
        Secret password = credentials[1];
        Secret[] keys = secretPair(entry, "nacosAccessKey", "nacosSecretKey");
        Secret accessKey = keys[0];
        Secret secretKey = keys[1];

        String contextPath = normalizeContextPath(entry.string("nacosContextPath", DEFAULT_CONTEXT_PATH));
        AddressServer addressServer = null;
        String rawAddressServer = entry.string("nacosAddressServer", "");
        if (!rawAddressServer.isBlank()) {
            try {
                addressServer = parseAddressServer(rawAddressServer.trim());
            } catch (IllegalArgumentException e) {
                entry.problem("nacosAddressServer", e.getMessage());
            }
        }
        boolean fuzzyWatch = entry.bool("nacosFuzzyWatch", true);

        HostTemplate hostTemplate = template(
                entry,
                "hostTemplate",
                t -> HostTemplate.parse(t == null ? DEFAULT_HOST_TEMPLATE : t, HOST_VARIABLES),
                d.hostTemplate());
        HostTemplate dubboInterface = template(
                entry, "dubboInterfaceHostTemplate", DubboNaming::interfaceTemplate, d.dubboInterfaceTemplate());
        HostTemplate dubboApplication = template(
                entry, "dubboApplicationHostTemplate", DubboNaming::applicationTemplate, d.dubboApplicationTemplate());
        String consumerApp = entry.string("dubboConsumerApplication", null);
        if (consumerApp != null && consumerApp.isBlank()) {
            entry.problem("dubboConsumerApplication", "must not be empty");
            consumerApp = null;
        }

        Tls tls = entry.child("tls").map(NacosOptions::parseTls).orElse(null);

        return new NacosOptions(
                namespaceIds,
                allNamespaces,
                namespaceName,
                groups,
                allGroups,
                refresh,
                allow,
                deny,
                username,
                password,
                accessKey,
                secretKey,
                contextPath,
                addressServer,
                timeout,
                fuzzyWatch,
                hostTemplate,
                dubboInterface,
                dubboApplication,
                consumerApp == null ? null : consumerApp.trim(),
                tls);
    }

    /**
     * The {@code tls} mapping: {@code caFile} is required (nacos-client's gRPC TLS reads its trust anchors from a
     * file, it has no "JVM's CAs" mode), and a key nacos-client must read is PKCS#8 (netty reads no other PEM key).
     */
    private static Tls parseTls(ConfigNode t) {
        if (!t.isMapping()) {
            t.problemHere("expected a mapping with caFile, certFile, keyFile, keyPassword, http, grpc, reloadInterval");
            return null;
        }
        boolean http = t.bool("http", true);
        boolean grpc = t.bool("grpc", true);
        Duration reload = t.duration("reloadInterval", Tls.DEFAULT_RELOAD, ChronoUnit.MILLIS);
        if (reload.isNegative()) {
            t.problem("reloadInterval", "must not be negative");
            reload = Tls.DEFAULT_RELOAD;
        }
        TlsFiles files = TlsFiles.parse(t);
        if (files.caFile() == null) {
            t.problem("caFile", "is required: the CA certificates (PEM) that sign the Nacos servers' certificates");
        }
        if (!http && !grpc) t.problemHere("http and grpc are both false: leave tls out for plaintext");
        if (grpc && files.keyFile() != null && !pkcs8(files.keyFile())) {
            t.problem(
                    "keyFile",
                    "nacos-client's gRPC TLS reads PKCS#8 keys only (BEGIN PRIVATE KEY or BEGIN ENCRYPTED PRIVATE"
                            + " KEY); convert it with: openssl pkcs8 -topk8 -in key.pem -out key-pkcs8.pem");
        }
        return new Tls(files, http, grpc, reload);
    }

    /** Whether a readable PEM key file holds a PKCS#8 key; true when it cannot be read (reported elsewhere). */
    static boolean pkcs8(java.nio.file.Path keyFile) {
        String text;
        try {
            text = java.nio.file.Files.readString(keyFile, java.nio.charset.StandardCharsets.US_ASCII);
        } catch (java.io.IOException | RuntimeException e) {
            return true;
        }
        return text.contains("-----BEGIN PRIVATE KEY-----") || text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----");
    }

    /** Two secrets that go together: both or neither. */
    private static Secret[] secretPair(ConfigNode entry, String first, String second) {
        Secret a = entry.secret(first).orElse(null);
        Secret b = entry.secret(second).orElse(null);
        if ((a == null) != (b == null)) {
            entry.problem(a == null ? second : first, "give " + first + " and " + second + " together");
            return new Secret[2];
        }
        return new Secret[] {a, b};
    }

    private static HostTemplate template(
            ConfigNode entry, String key, Function<String, HostTemplate> parse, HostTemplate fallback) {
        if (!entry.has(key)) return fallback;
        String text = entry.string(key, null);
        try {
            return parse.apply(text);
        } catch (IllegalArgumentException e) {
            entry.problem(key, e.getMessage());
            return fallback;
        }
    }

    private static List<String> distinct(List<String> values, Function<String, String> normalize) {
        Set<String> out = new LinkedHashSet<>();
        for (String v : values) out.add(normalize.apply(v.trim()));
        return new ArrayList<>(out);
    }

    static String normalizeContextPath(String raw) {
        String s = raw == null ? "" : raw.trim();
        while (s.endsWith("/")) s = s.substring(0, s.length() - 1);
        if (s.isEmpty()) return "";
        return s.startsWith("/") ? s : "/" + s;
    }

    /** Parses {@code http://host[:port][/path]} or {@code host[:port]}. */
    static AddressServer parseAddressServer(String raw) {
        String s = raw.contains("://") ? raw : "http://" + raw;
        URI uri;
        try {
            uri = URI.create(s);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("'" + raw + "' is not a URL: " + e.getMessage());
        }
        if (uri.getHost() == null || uri.getHost().isBlank()) {
            throw new IllegalArgumentException("'" + raw + "' has no host");
        }
        int port = uri.getPort() < 0 ? 8080 : uri.getPort();
        String path = normalizeContextPath(uri.getPath());
        if (path.endsWith("/serverlist")) path = path.substring(0, path.length() - "/serverlist".length());
        return new AddressServer(uri.getHost(), port, path);
    }
}
