package dev.meshbridge.registry.zookeeper;

import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Protocol;
import java.util.Map;
import java.util.Objects;

/** What the watcher knows about one leaf znode: a Dubbo provider, a curator x-discovery instance, or nothing usable. */
sealed interface Leaf permits Leaf.DubboProvider, Leaf.Instance, Leaf.Unusable {

    /** Leaves that give no endpoint. */
    enum Unusable implements Leaf {
        /** Listed, data not read yet. */
        PENDING,
        /** Deliberately left out (Dubbo's {@code empty://}). */
        IGNORED,
        /** Malformed; reported once when it was read. */
        MALFORMED
    }

    /**
     * A provider URL under {@code <root>/<interface>/providers}.
     *
     * @param version Dubbo version, {@code ""} when none
     * @param group Dubbo group, {@code ""} when none
     * @param application the {@code application} parameter
     * @param portName the port name of its protocol ({@code dubbo}, {@code tri}...)
     * @param protocol the mesh protocol
     * @param timestamp the provider's {@code timestamp} parameter (0 when absent): the newest of two registrations of
     *     one address wins
     * @param endpoint the endpoint, with one port named {@code portName}
     * @param nameHash a 64-bit hash of the znode name: the tie-break of the duplicate rule, stable across restarts
     * @param params the URL parameters an override rule may read (the bulky per-process ones left out), interned
     */
    record DubboProvider(
            String version,
            String group,
            String application,
            String portName,
            Protocol protocol,
            long timestamp,
            Endpoint endpoint,
            long nameHash,
            Map<String, String> params)
            implements Leaf {

        public DubboProvider {
            Objects.requireNonNull(endpoint, "endpoint");
            Objects.requireNonNull(params, "params");
        }

        /** The identity the duplicate rule breaks ties with. */
        String id() {
            return Long.toHexString(nameHash);
        }
    }

    /**
     * A curator x-discovery {@code ServiceInstance} under {@code <root>/<service>/<id>}.
     *
     * @param dubboApplication true for a Dubbo 3 application-level instance (its metadata has {@code dubbo.*} keys),
     *     false for Spring Cloud and other x-discovery users
     * @param protocols the protocol of each of the endpoint's port names
     * @param registeredAt {@code registrationTimeUTC}: the newest of two registrations of one address wins
     * @param endpoint the endpoint
     * @param idHash a 64-bit hash of the instance id (the znode name), the tie-break of the duplicate rule
     */
    record Instance(
            boolean dubboApplication,
            Map<String, Protocol> protocols,
            long registeredAt,
            Endpoint endpoint,
            long idHash)
            implements Leaf {

        public Instance {
            protocols = Map.copyOf(protocols);
            Objects.requireNonNull(endpoint, "endpoint");
        }

        /** The identity the duplicate rule breaks ties with. */
        String id() {
            return Long.toHexString(idHash);
        }
    }
}
