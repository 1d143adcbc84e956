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
import dev.meshbridge.core.watch.Duplicates;
import dev.meshbridge.core.watch.ServicePorts;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Turns one Eureka application and its instances into the full endpoint list of one service.
 *
 * <p>Mapping, per instance:
 *
 * <ol>
 *   <li>address: what the instance tells clients to connect to, as Spring Cloud Netflix's {@code
 *       EurekaServiceInstance.getHost()} and Netflix's own {@code DiscoveryEnabledServer} read it: {@code hostName}
 *       (which Spring sets to the IP when {@code eureka.instance.prefer-ip-address} is true, and to the machine's
 *       name otherwise), else {@code ipAddr}; a host name is resolved by the watcher kit per the registry's {@code
 *       nonIpAddress};
 *   <li>ports: the secure port when enabled, as port {@code https}, and then only that one (Spring's {@code
 *       EurekaServiceInstance} calls a secure instance there only); else the non-secure port when enabled, as port
 *       {@code http}; an instance with neither is skipped and reported;
 *   <li>health: {@code UP} is healthy; {@code OUT_OF_SERVICE} is draining; {@code DOWN}, {@code STARTING} and {@code
 *       UNKNOWN} are unhealthy; none but {@code UP} gets traffic, all stay visible;
 *   <li>weight: the integer in metadata {@code weightKey} (0..1000000, 0 meaning no traffic), else {@link
 *       Endpoint#DEFAULT_WEIGHT}; a malformed value is reported and the default used;
 *   <li>labels: all metadata, sanitized ({@link Labels#sanitize}), with dropped keys reported;
 *   <li>locality: region and zone from metadata {@code regionKey} and {@code zoneKey}; lacking those, an AWS data
 *       center's {@code availability-zone} gives the zone, and the zone without its letter the region;
 *   <li>two instances at the same address and ports (a stale registration beside a new one) give one endpoint, by the
 *       {@link Duplicates} rule (an UP instance beats one that is not, then the most recently updated); the other is
 *       reported.
 * </ol>
 */
final class ApplicationMapper {

    static final String HTTP = Protocol.HTTP.portName();
    static final String HTTPS = Protocol.HTTPS.portName();

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
        List<Duplicates.Candidate> candidates = new ArrayList<>();
        for (InstanceInfo instance : instances) {
            String item = app + "/" + instance.getId();
            Endpoint endpoint;
            try {
                endpoint = endpoint(item, instance);
            } catch (IllegalArgumentException e) {
                status.skipped(item, e.getMessage());
                continue;
            }
            if (endpoint != null) candidates.add(new Duplicates.Candidate(endpoint, updatedAt(instance), item));
        }
        Duplicates.Result picked = Duplicates.pick(candidates);
        for (Duplicates.Dropped d : picked.dropped()) status.skipped(d.dropped().id(), d.reason());
        List<ServicePort> ports = ServicePorts.of(
                config, picked.endpoints(), name -> name.equals(HTTPS) ? Protocol.HTTPS : Protocol.HTTP);
        return new ServiceUpsert(key(app), host, ports, picked.endpoints());
    }

    private static long updatedAt(InstanceInfo instance) {
        Long dirty = instance.getLastDirtyTimestamp();
        return Math.max(instance.getLastUpdatedTimestamp(), dirty == null ? 0 : dirty);
    }

    /** One instance as an endpoint, or null when it cannot be one (reported). */
    Endpoint endpoint(String item, InstanceInfo instance) {
        String address = address(item, instance);
        if (address == null) return null;
        Endpoint.Builder b = Endpoint.builder(address);
        int portCount = 0;
        // Spring's EurekaServiceInstance (and Netflix's clients with the secure VIP): an instance whose secure port is
        // enabled is called on that port only
        if (instance.isPortEnabled(PortType.SECURE)) {
            portCount += port(b, item, HTTPS, instance.getSecurePort());
        } else if (instance.isPortEnabled(PortType.UNSECURE)) {
            portCount += port(b, item, HTTP, instance.getPort());
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

    /** The address clients connect to ({@code hostName}, else {@code ipAddr}), or null when there is none (reported). */
    private String address(String item, InstanceInfo instance) {
        String raw = firstNonBlank(instance.getHostName(), instance.getIPAddr());
        if (raw == null) status.skipped(item, "the instance has neither hostName nor ipAddr");
        return raw;
    }

    private static String firstNonBlank(String a, String b) {
        if (a != null && !a.isBlank()) return a.trim();
        if (b != null && !b.isBlank()) return b.trim();
        return null;
    }
}
