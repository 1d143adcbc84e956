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
        for (Endpoint e : endpoints) e.putContent(h);
        h.putMap(labels);
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
}
