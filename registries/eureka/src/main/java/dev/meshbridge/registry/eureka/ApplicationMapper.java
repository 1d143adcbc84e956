package dev.meshbridge.registry.eureka;

import com.netflix.appinfo.AmazonInfo;
import com.netflix.appinfo.InstanceInfo;
import com.netflix.appinfo.InstanceInfo.InstanceStatus;
import com.netflix.appinfo.InstanceInfo.PortType;
import dev.meshbridge.core.config.RegistryConfig;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Health;
import dev.meshbridge.core.model.Locality;
import dev.meshbridge.core.model.Protocol;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.naming.Labels;
import dev.meshbridge.core.spi.RegistryStatus;
import dev.meshbridge.core.spi.ServiceUpsert;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Turns one Eureka application and its instances into the full endpoint list of one service.
 *
 * <p>Mapping, per instance:
 *
 * <ol>
 *   <li>address: {@code ipAddr} (or {@code hostName} when there is no {@code ipAddr}); a host name is resolved or
 *       skipped per {@link EurekaOptions.NonIpAddress}, and reported either way when it cannot be used;
 *   <li>ports: the non-secure port when enabled, as port {@code http}; the secure port when enabled, as port {@code
 *       https}; an instance with neither is skipped and reported;
 *   <li>health: {@code UP} is healthy; {@code OUT_OF_SERVICE} is draining; {@code DOWN}, {@code STARTING} and {@code
 *       UNKNOWN} are unhealthy; none but {@code UP} gets traffic, all stay visible;
 *   <li>weight: the integer in metadata {@code weightKey} (0..1000000, 0 meaning no traffic), else {@link
 *       Endpoint#DEFAULT_WEIGHT}; a malformed value is reported and the default used;
 *   <li>labels: all metadata, sanitized ({@link Labels#sanitize}), with dropped keys reported;
 *   <li>locality: region and zone from metadata {@code regionKey} and {@code zoneKey}; lacking those, an AWS data
 *       center's {@code availability-zone} gives the zone, and the zone without its letter the region;
 *   <li>two instances at the same address and ports (a stale registration beside a new one) give one endpoint: the
 *       most recently updated instance; the other is reported.
 * </ol>
 */
final class ApplicationMapper {

    static final String HTTP = Protocol.HTTP.portName();
    static final String HTTPS = Protocol.HTTPS.portName();

    private static final Pattern IPV4 =
            Pattern.compile("(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)(\\.(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)){3}");
    private static final Pattern IPV6_CHARS = Pattern.compile("[0-9A-Fa-f:.]+");
    private static final Pattern ZONE_LETTER = Pattern.compile("[a-z]+$");

    private final RegistryConfig config;
    private final EurekaOptions options;
    private final RegistryStatus status;

    ApplicationMapper(RegistryConfig config, EurekaOptions options, RegistryStatus status) {
        this.config = config;
        this.options = options;
        this.status = status;
    }

    ServiceKey key(String app) {
        return new ServiceKey(EurekaWatcherProvider.TYPE, config.name(), "", "", app, "");
    }

    /**
     * The host of an application.
     *
     * @throws IllegalArgumentException when the template gives no valid host for it
     */
    String host(String app) {
        return options.hostTemplate()
                .render(Map.of("service", app.toLowerCase(Locale.ROOT), "registry", config.name()));
    }

    /** The service of one application with all its instances (those that cannot be used are left out, reported). */
    ServiceUpsert map(String app, String host, Collection<InstanceInfo> instances) {
        Map<String, Candidate> byAddressAndPorts = new LinkedHashMap<>();
        for (InstanceInfo instance : instances) {
            String item = app + "/" + instance.getId();
            Endpoint endpoint;
            try {
                endpoint = endpoint(item, instance);
            } catch (IllegalArgumentException e) {
                status.skipped(item, e.getMessage());
                continue;
            }
            if (endpoint == null) continue;
            Candidate candidate = new Candidate(item, updatedAt(instance), endpoint);
            String where = endpoint.address() + endpoint.ports();
            Candidate other = byAddressAndPorts.get(where);
            if (other == null) {
                byAddressAndPorts.put(where, candidate);
                continue;
            }
            Candidate keep = NEWEST.compare(candidate, other) > 0 ? candidate : other;
            Candidate drop = keep == candidate ? other : candidate;
            byAddressAndPorts.put(where, keep);
            status.skipped(drop.item(), "same address and ports as the newer instance " + keep.item());
        }
        List<Endpoint> endpoints = new ArrayList<>();
        TreeMap<String, ServicePort> ports = new TreeMap<>();
        for (Candidate c : byAddressAndPorts.values()) {
            endpoints.add(c.endpoint());
            c.endpoint().ports().forEach((name, number) -> ports.computeIfAbsent(name, n -> servicePort(n, number)));
        }
        endpoints.sort(null);
        return new ServiceUpsert(key(app), host, List.copyOf(ports.values()), endpoints);
    }

    private record Candidate(String item, long updatedAt, Endpoint endpoint) {}

    private static final Comparator<Candidate> NEWEST =
            Comparator.comparingLong(Candidate::updatedAt).thenComparing(Candidate::item);

    private static long updatedAt(InstanceInfo instance) {
        Long dirty = instance.getLastDirtyTimestamp();
        return Math.max(instance.getLastUpdatedTimestamp(), dirty == null ? 0 : dirty);
    }

    private ServicePort servicePort(String name, int endpointPort) {
        Protocol protocol = name.equals(HTTPS) ? Protocol.HTTPS : Protocol.HTTP;
        return new ServicePort(name, config.servicePort(name, protocol, endpointPort), protocol);
    }

    /** One instance as an endpoint, or null when it cannot be one (reported). */
    Endpoint endpoint(String item, InstanceInfo instance) {
        String address = address(item, instance);
        if (address == null) return null;
        Endpoint.Builder b = Endpoint.builder(address);
        int portCount = 0;
        if (instance.isPortEnabled(PortType.UNSECURE)) {
            portCount += port(b, item, HTTP, instance.getPort());
        }
        if (instance.isPortEnabled(PortType.SECURE)) {
            portCount += port(b, item, HTTPS, instance.getSecurePort());
        }
        if (portCount == 0) {
            status.skipped(item, "no usable port: neither the port nor the secure port is enabled and in 1..65535");
            return null;
        }
        Map<String, String> metadata = metadata(instance);
        b.health(health(instance.getStatus()));
        b.weight(weight(item, metadata));
        b.locality(locality(instance, metadata));
        Labels.Result labels = Labels.sanitize(metadata);
        if (!labels.dropped().isEmpty()) status.droppedLabels(item, labels.dropped());
        b.labels(labels.labels());
        return b.build();
    }

    private int port(Endpoint.Builder b, String item, String name, int number) {
        if (number < 1 || number > 65535) {
            status.skipped(item + " port " + name, "port " + number + " is out of 1..65535");
            return 0;
        }
        b.port(name, number);
        return 1;
    }

    static Health health(InstanceStatus s) {
        if (s == null) return Health.UNHEALTHY;
        return switch (s) {
            case UP -> Health.HEALTHY;
            case OUT_OF_SERVICE -> Health.DRAINING;
            case DOWN, STARTING, UNKNOWN -> Health.UNHEALTHY;
        };
    }

    private static Map<String, String> metadata(InstanceInfo instance) {
        Map<String, String> m = instance.getMetadata();
        if (m == null || m.isEmpty()) return Map.of();
        Map<String, String> out = new HashMap<>();
        m.forEach((k, v) -> {
            if (k != null) out.put(k, v == null ? "" : v);
        });
        return out;
    }

    private int weight(String item, Map<String, String> metadata) {
        String raw = metadata.get(options.weightKey());
        if (raw == null || raw.isBlank()) return Endpoint.DEFAULT_WEIGHT;
        try {
            int w = Integer.parseInt(raw.trim());
            if (w >= 0 && w <= Endpoint.MAX_WEIGHT) return w;
        } catch (NumberFormatException e) {
            // reported below
        }
        status.skipped(
                item + " metadata " + options.weightKey(),
                "'" + raw + "' is not a weight (an integer in 0.." + Endpoint.MAX_WEIGHT + "); using "
                        + Endpoint.DEFAULT_WEIGHT);
        return Endpoint.DEFAULT_WEIGHT;
    }

    private Locality locality(InstanceInfo instance, Map<String, String> metadata) {
        String zone = metadata.getOrDefault(options.zoneKey(), "").trim();
        String region = metadata.getOrDefault(options.regionKey(), "").trim();
        if (instance.getDataCenterInfo() instanceof AmazonInfo aws) {
            String az = aws.get(AmazonInfo.MetaDataKey.availabilityZone);
            if (az != null && !az.isBlank()) {
                if (zone.isEmpty()) zone = az.trim();
                if (region.isEmpty()) region = ZONE_LETTER.matcher(az.trim()).replaceFirst("");
            }
        }
        return Locality.of(region, zone);
    }

    /** The IP to use, or null when the instance is skipped (reported). */
    private String address(String item, InstanceInfo instance) {
        String raw = firstNonBlank(instance.getIPAddr(), instance.getHostName());
        if (raw == null) {
            status.skipped(item, "the instance has neither ipAddr nor hostName");
            return null;
        }
        String ip = ipLiteral(raw);
        if (ip != null) return ip;
        if (options.nonIpAddress() == EurekaOptions.NonIpAddress.SKIP) {
            status.skipped(item, "address '" + raw + "' is a host name, not an IP (nonIpAddress: skip)");
            return null;
        }
        try {
            InetAddress[] all = InetAddress.getAllByName(raw);
            InetAddress chosen = all[0];
            for (InetAddress a : all) {
                if (a instanceof Inet4Address) {
                    chosen = a;
                    break;
                }
            }
            return chosen.getHostAddress();
        } catch (UnknownHostException | SecurityException e) {
            status.skipped(item, "address '" + raw + "' is a host name that does not resolve (nonIpAddress: resolve)");
            return null;
        }
    }

    /** The address itself when it is an IPv4 or IPv6 literal (brackets removed), else null; never touches DNS. */
    static String ipLiteral(String raw) {
        String s = raw.trim();
        if (IPV4.matcher(s).matches()) return s;
        if (s.startsWith("[") && s.endsWith("]")) s = s.substring(1, s.length() - 1);
        if (s.indexOf(':') >= 0 && IPV6_CHARS.matcher(s).matches()) {
            try {
                // a string with ':' is parsed as an IPv6 literal, never looked up
                return InetAddress.getByName(s).getHostAddress();
            } catch (UnknownHostException e) {
                return null;
            }
        }
        return null;
    }

    private static String firstNonBlank(String a, String b) {
        if (a != null && !a.isBlank()) return a.trim();
        if (b != null && !b.isBlank()) return b.trim();
        return null;
    }
}
