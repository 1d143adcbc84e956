package dev.meshbridge.core.aggregate;

import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.model.ServicePort;
import dev.meshbridge.core.util.Hash64;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/** The content version of a service: a hash over every field, in a fixed order. */
final class ServiceVersions {

    private ServiceVersions() {}

    static String version(
            String host,
            List<ServicePort> ports,
            List<Endpoint> endpoints,
            Map<String, String> labels,
            Collection<ServiceKey> sources) {
        Hash64 h = new Hash64().putString(host);
        h.putInt(ports.size());
        for (ServicePort p : ports) {
            h.putString(p.name()).putInt(p.number()).putString(p.protocol().name());
        }
        h.putInt(endpoints.size());
        for (Endpoint e : endpoints) {
            h.putString(e.address())
                    .putInt(e.weight())
                    .putBoolean(e.enabled())
                    .putString(e.health().name());
            putMap(h, e.ports());
            putMap(h, e.labels());
            h.putString(e.locality().region())
                    .putString(e.locality().zone())
                    .putString(e.locality().subZone());
        }
        putMap(h, labels);
        h.putInt(sources.size());
        for (ServiceKey k : sources) {
            h.putString(k.registryType())
                    .putString(k.registry())
                    .putString(k.namespace())
                    .putString(k.group())
                    .putString(k.name())
                    .putString(k.version());
        }
        return h.hex();
    }

    private static void putMap(Hash64 h, Map<String, ?> map) {
        h.putInt(map.size());
        for (Map.Entry<String, ?> entry : map.entrySet()) {
            h.putString(entry.getKey()).putString(String.valueOf(entry.getValue()));
        }
    }
}
