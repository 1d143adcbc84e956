package dev.meshbridge.registry.zookeeper;

import dev.meshbridge.core.config.ConfigNode;
import dev.meshbridge.core.config.Secret;
import dev.meshbridge.core.dubbo.DubboNaming;
import dev.meshbridge.core.naming.HostTemplate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import org.apache.zookeeper.common.PathUtils;

/**
 * The options of one {@code type: zookeeper} entry of {@code registries:}, modelled on Higress's McpBridge zookeeper
 * registry. Immutable, with value equality: the reconciler restarts the watcher exactly when these change.
 *
 * @param servicesPaths root paths to watch ({@code zkServicesPath}); each root may hold Dubbo interfaces, curator
 *     x-discovery services (Dubbo applications, Spring Cloud) and Dubbo's {@code mapping} node
 * @param chroot ZooKeeper chroot every path is relative to, {@code ""} for none
 * @param username digest-auth user, or null for no authentication
 * @param password digest-auth password (with {@code username})
 * @param sessionTimeout ZooKeeper session timeout asked for
 * @param connectionTimeout how long one connection attempt may take
 * @param maxResponseBytes the largest response accepted from ZooKeeper (the client's {@code jute.maxbuffer})
 * @param dubboInterfaceHost host template of Dubbo interfaces (and of interfaces found through the mapping)
 * @param dubboApplicationHost host template of Dubbo applications
 * @param springCloudHost host template of Spring Cloud (curator x-discovery) services
 * @param dubboConsumerApplication the Dubbo consumer application the bridge stands for when it applies override
 *     rules ({@code <application>.configurators} and rules that name an application), or null for none
 * @param tls TLS to ZooKeeper's secure client port ({@code tls:} with key and trust stores), or null for plaintext
 */
public record ZookeeperOptions(
        List<String> servicesPaths,
        String chroot,
        String username,
        Secret password,
        Duration sessionTimeout,
        Duration connectionTimeout,
        int maxResponseBytes,
        HostTemplate dubboInterfaceHost,
        HostTemplate dubboApplicationHost,
        HostTemplate springCloudHost,
        String dubboConsumerApplication,
        ZookeeperTls tls) {

    public static final List<String> DEFAULT_SERVICES_PATHS = List.of("/dubbo", "/services");
    public static final Duration DEFAULT_SESSION_TIMEOUT = Duration.ofSeconds(60);
    public static final Duration DEFAULT_CONNECTION_TIMEOUT = Duration.ofSeconds(15);
    public static final int DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

    /**
     * Default host of a Spring Cloud service: the service, then the root path (dashes for slashes), then {@code
     * zookeeper}, as Higress names them: {@code orders} under {@code /services} is {@code orders.services.zookeeper}.
     */
    public static final String DEFAULT_SPRING_CLOUD_TEMPLATE = "{service}[.{root}].zookeeper";

    /** Variables of the Spring Cloud host template. */
    public static final Set<String> SPRING_CLOUD_VARIABLES = Set.of("service", "root", "registry");

    public ZookeeperOptions {
        servicesPaths = List.copyOf(servicesPaths);
        Objects.requireNonNull(chroot, "chroot");
        if ((username == null) != (password == null))
            throw new IllegalArgumentException("username and password go together");
        Objects.requireNonNull(sessionTimeout, "sessionTimeout");
        Objects.requireNonNull(connectionTimeout, "connectionTimeout");
        Objects.requireNonNull(dubboInterfaceHost, "dubboInterfaceHost");
        Objects.requireNonNull(dubboApplicationHost, "dubboApplicationHost");
        Objects.requireNonNull(springCloudHost, "springCloudHost");
    }

    /** All defaults: roots {@code /dubbo} and {@code /services}, no chroot, no authentication. */
    public static ZookeeperOptions defaults() {
        return new ZookeeperOptions(
                DEFAULT_SERVICES_PATHS,
                "",
                null,
                null,
                DEFAULT_SESSION_TIMEOUT,
                DEFAULT_CONNECTION_TIMEOUT,
                DEFAULT_MAX_RESPONSE_BYTES,
                DubboNaming.interfaceTemplate(null),
                DubboNaming.applicationTemplate(null),
                springCloudTemplate(null),
                null,
                null);
    }

    /** The same options with TLS to ZooKeeper's secure client port (null: plaintext). */
    public ZookeeperOptions withTls(ZookeeperTls tls) {
        return new ZookeeperOptions(
                servicesPaths,
                chroot,
                username,
                password,
                sessionTimeout,
                connectionTimeout,
                maxResponseBytes,
                dubboInterfaceHost,
                dubboApplicationHost,
                springCloudHost,
                dubboConsumerApplication,
                tls);
    }

    public static HostTemplate springCloudTemplate(String template) {
        return HostTemplate.parse(template == null ? DEFAULT_SPRING_CLOUD_TEMPLATE : template, SPRING_CLOUD_VARIABLES);
    }

    public boolean authenticated() {
        return username != null;
    }

    /**
     * The root whose Dubbo interfaces are the home environment (no {@code {env}} in their hosts): {@code /dubbo}, Dubbo's
     * default root, when it is watched, else the first root listed.
     */
    public String homeInterfaceRoot() {
        return servicesPaths.contains("/dubbo") ? "/dubbo" : servicesPaths.get(0);
    }

    /**
     * The root whose Dubbo 3 applications are the home environment: {@code /services}, Dubbo's default for
     * application-level registration, when it is watched, else the first root listed.
     */
    public String homeApplicationRoot() {
        return servicesPaths.contains("/services") ? "/services" : servicesPaths.get(0);
    }

    /** Parses the type's own fields of one entry; problems are recorded on {@code entry} with their line. */
    static ZookeeperOptions parse(ConfigNode entry) {
        List<String> paths = entry.has("zkServicesPath") ? entry.strings("zkServicesPath") : DEFAULT_SERVICES_PATHS;
        List<String> roots = new ArrayList<>();
        for (String p : paths) {
            String root = normalizePath(p);
            String problem = pathProblem(root);
            if (problem != null) {
                entry.problem("zkServicesPath", "'" + p + "' " + problem);
                continue;
            }
            for (String other : roots) {
                if (other.equals(root)) {
                    entry.problem("zkServicesPath", "'" + p + "' is listed twice");
                } else if (contains(other, root) || contains(root, other)) {
                    entry.problem(
                            "zkServicesPath",
                            "'" + p + "' and '" + other + "' overlap; list roots that do not contain each other");
                }
            }
            roots.add(root);
        }
        if (entry.has("zkServicesPath") && paths.isEmpty()) {
            entry.problem("zkServicesPath", "give at least one root path, e.g. [/dubbo, /services]");
        }

        String chroot = "";
        if (entry.has("chroot")) {
            String raw = entry.string("chroot", "");
            String c = normalizePath(raw);
            String problem = pathProblem(c);
            if (problem != null) entry.problem("chroot", "'" + raw + "' " + problem);
            else if (!c.equals("/")) chroot = c;
        }

        String username = entry.string("username", null);
        Optional<Secret> password = entry.secret("password");
        if (username != null && username.contains(":")) {
            entry.problem("username", "a digest user name cannot contain ':'");
        }
        if (username != null && username.isBlank()) entry.problem("username", "must not be empty");
        if (username != null && password.isEmpty() && !entry.has("password")) {
            entry.problem("username", "digest authentication needs a password too: add password");
        }
        if (username == null && password.isPresent()) {
            entry.problem("password", "digest authentication needs a username too: add username");
        }
        boolean auth = username != null && !username.isBlank() && password.isPresent();

        Duration session = entry.duration("sessionTimeout", DEFAULT_SESSION_TIMEOUT);
        if (session.compareTo(Duration.ofSeconds(1)) < 0 || session.compareTo(Duration.ofHours(1)) > 0) {
            entry.problem("sessionTimeout", "expected 1s..1h, got " + text(session));
            session = DEFAULT_SESSION_TIMEOUT;
        }
        Duration connection = entry.duration("connectionTimeout", DEFAULT_CONNECTION_TIMEOUT);
        if (connection.compareTo(Duration.ofMillis(100)) < 0 || connection.compareTo(Duration.ofMinutes(10)) > 0) {
            entry.problem("connectionTimeout", "expected 100ms..10m, got " + text(connection));
            connection = DEFAULT_CONNECTION_TIMEOUT;
        }
        int maxResponse =
                entry.integer("maxResponseBytes", DEFAULT_MAX_RESPONSE_BYTES, 1024 * 1024, Integer.MAX_VALUE / 2);

        HostTemplate iface = template(entry, "dubboInterfaceHostTemplate", DubboNaming::interfaceTemplate);
        HostTemplate app = template(entry, "dubboApplicationHostTemplate", DubboNaming::applicationTemplate);
        HostTemplate spring = template(entry, "springCloudHostTemplate", ZookeeperOptions::springCloudTemplate);
        String consumerApp = entry.string("dubboConsumerApplication", null);
        if (consumerApp != null && consumerApp.isBlank()) {
            entry.problem("dubboConsumerApplication", "must not be empty");
            consumerApp = null;
        }

        return new ZookeeperOptions(
                roots.isEmpty() ? DEFAULT_SERVICES_PATHS : roots,
                chroot,
                auth ? username : null,
                auth ? password.get() : null,
                session,
                connection,
                maxResponse,
                iface,
                app,
                spring,
                consumerApp == null ? null : consumerApp.trim(),
                entry.child("tls").map(ZookeeperTls::parse).orElse(null));
    }

    private static HostTemplate template(ConfigNode entry, String key, Function<String, HostTemplate> parse) {
        String text = entry.string(key, null);
        try {
            return parse.apply(text);
        } catch (IllegalArgumentException e) {
            entry.problem(key, e.getMessage());
            return parse.apply(null);
        }
    }

    private static String text(Duration d) {
        return d.toString().substring(2).toLowerCase(java.util.Locale.ROOT);
    }

    /** Trims and drops a trailing slash ({@code /dubbo/} is {@code /dubbo}). */
    static String normalizePath(String p) {
        String s = p.trim();
        while (s.length() > 1 && s.endsWith("/")) s = s.substring(0, s.length() - 1);
        return s;
    }

    /** Why {@code path} is not a usable absolute ZooKeeper path, or null. */
    static String pathProblem(String path) {
        if (!path.startsWith("/")) return "must be an absolute path starting with '/'";
        try {
            PathUtils.validatePath(path);
        } catch (IllegalArgumentException e) {
            return "is not a valid ZooKeeper path: " + e.getMessage();
        }
        if (path.equals("/zookeeper") || path.startsWith("/zookeeper/"))
            return "is ZooKeeper's own tree, not a service path";
        return null;
    }

    private static boolean contains(String parent, String child) {
        return parent.equals("/") || child.startsWith(parent + "/");
    }
}
