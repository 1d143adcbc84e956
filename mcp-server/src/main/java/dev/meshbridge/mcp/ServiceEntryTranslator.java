package dev.meshbridge.mcp;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.UnsafeByteOperations;
import dev.meshbridge.ads.PackedBytes;
import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Locality;
import dev.meshbridge.core.model.MeshService;
import dev.meshbridge.core.model.ServiceKey;
import dev.meshbridge.core.naming.Dns1123;
import dev.meshbridge.core.naming.Labels;
import dev.meshbridge.core.util.CompactSortedMap;
import dev.meshbridge.core.util.Hash64;
import dev.meshbridge.mcp.McpOptions.EndpointMode;
import dev.meshbridge.mcp.api.networking.v1alpha3.ServiceEntry;
import dev.meshbridge.mcp.api.networking.v1alpha3.ServicePort;
import dev.meshbridge.mcp.api.networking.v1alpha3.WorkloadEntry;
import dev.meshbridge.mcp.api.networking.v1alpha3.WorkloadSelector;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * Turns one catalog service into the Istio resources istiod gets over MCP. Pure and deterministic: the same service
 * and options give the same resources, bytes and versions in every bridge replica, and a service's resources depend
 * on that service only, so a change to one instance re-versions one resource.
 *
 * <p>What a service becomes:
 *
 * <ol>
 *   <li>a ServiceEntry named by the {@code resourceName} template in the configured namespace, with the service's
 *       host, location MESH_INTERNAL, resolution STATIC and the configured exportTo;
 *   <li>ports: one per catalog service port, in the catalog's order: the virtual port number the registry
 *       configuration gave, the port name, and the Istio protocol ({@link IstioProtocols}); each instance maps the
 *       port name to its own real port, so instances on different ports work;
 *   <li>instances: only those that may get traffic (enabled, weight above 0) and are healthy, each with its IP
 *       address, ports by name, labels, locality ({@code region/zone/subzone}) and weight. An instance whose address
 *       is not an IP (STATIC needs one) is left out and noted; so is a port name the service does not declare;
 *   <li>in {@link EndpointMode#WORKLOAD_ENTRY} mode the ServiceEntry has a workloadSelector on {@value
 *       #LABEL_SERVICE} instead of endpoints, and each instance is a WorkloadEntry named {@code
 *       <serviceEntryName>.<address>-<ports>} carrying that label plus its own labels;
 *   <li>metadata labels on every resource: {@value #LABEL_MANAGED_BY}, the registry type and name the service comes
 *       from, {@code istio.io/rev} when configured, and the catalog's service labels;
 *   <li>the result is checked as istiod would ({@link IstioValidation}); a service that would fail is refused with
 *       its reasons and no resource.
 * </ol>
 */
public final class ServiceEntryTranslator {

    public static final String LABEL_MANAGED_BY = "app.kubernetes.io/managed-by";
    public static final String MANAGED_BY = "meshbridge";
    public static final String LABEL_REGISTRY = "meshbridge.dev/registry";
    public static final String LABEL_REGISTRY_TYPE = "meshbridge.dev/registry-type";
    /** The label that ties WorkloadEntries to their ServiceEntry in WorkloadEntry mode. */
    public static final String LABEL_SERVICE = "meshbridge.dev/service";

    public static final String LABEL_REVISION = "istio.io/rev";

    /**
     * What most ServiceEntries and WorkloadEntries carry, the dictionary the server packs them with ({@link
     * PackedBytes}): the type URLs, the metadata labels every resource has and the names of WorkloadEntry fields'
     * common values.
     */
    static final PackedBytes.Dictionary DICTIONARY = PackedBytes.Dictionary.of(
            LABEL_REGISTRY_TYPE,
            LABEL_REGISTRY,
            LABEL_MANAGED_BY,
            MANAGED_BY,
            LABEL_SERVICE,
            LABEL_REVISION,
            "type.googleapis.com/istio.networking.v1alpha3.WorkloadEntry",
            "type.googleapis.com/istio.networking.v1alpha3.ServiceEntry",
            "zookeeper nacos consul eureka kubernetes spring-cloud dubbo",
            "application version release http grpc TCP HTTP2 GRPC");

    private final McpOptions options;
    /** The inline ServiceEntry's last field, {@code export_to}, the same for every service. */
    private final ByteString exportToBytes;

    public ServiceEntryTranslator(McpOptions options) {
        this.options = Objects.requireNonNull(options);
        this.exportToBytes = McpResource.deterministicBytes(
                ServiceEntry.newBuilder().addAllExportTo(options.exportTo()).build());
    }

    public McpOptions options() {
        return options;
    }

    public ServiceTranslation translate(MeshService service) {
        return translate(service, null).translation();
    }

    /**
     * What the last translation of a service in {@link EndpointMode#INLINE} mode keeps for the next one: the
     * ServiceEntry's bytes, where each endpoint's WorkloadEntry sits in them, and the service-level part ({@link
     * Head}). A change of one instance then builds, checks and serializes that instance only; the others' bytes and the
     * head are copied. Holds no copy of the bytes while at rest
     * ({@link #atRest}): the served resource has them (packed), and the server unpacks them for the next translation
     * ({@link #withBytes}); the endpoints are the catalog's.
     *
     * @param ports the service's ports the WorkloadEntries were made for
     * @param endpoints the endpoints whose WorkloadEntry is reusable (made without a note), in catalog order
     * @param spans where each one's WorkloadEntry starts in {@code bytes} and its length, two ints per endpoint; null
     *     when every WorkloadEntry in the bytes is reusable (the usual case), then read from the bytes again when they
     *     come back ({@link #withBytes}): 2 ints per endpoint held for every service is about 10% of the heap a
     *     million endpoints take, and reading them costs about a microsecond per change
     * @param bytes the ServiceEntry's serialized bytes; null at rest
     * @param size the length of those bytes (the served resource ends with them)
     * @param servedHash the version hash of the served resource they were kept for (0 until at rest)
     * @param head the service-level part of the translation, reused while its inputs are the same
     */
    record Reuse(
            List<dev.meshbridge.core.model.ServicePort> ports,
            List<Endpoint> endpoints,
            int[] spans,
            ByteString bytes,
            int size,
            long servedHash,
            Head head) {

        Reuse(
                List<dev.meshbridge.core.model.ServicePort> ports,
                List<Endpoint> endpoints,
                int[] spans,
                ByteString bytes,
                Head head) {
            this(ports, endpoints, spans, bytes, bytes.size(), 0, head);
        }

        /** The same without its bytes, kept while the resource of that version hash is served. */
        Reuse atRest(long servedHash) {
            return new Reuse(ports, endpoints, spans, null, size, servedHash, head);
        }

        /** The same over the bytes again ({@code size} of them: the end of the served resource's unpacked bytes). */
        Reuse withBytes(ByteString same) {
            if (same.size() != size) throw new IllegalArgumentException("not the bytes kept: " + same.size());
            return new Reuse(ports, endpoints, spans, same, size, servedHash, head);
        }

        /**
         * Where each kept endpoint's WorkloadEntry sits in the bytes, as {@code spans} has it; null when the bytes do
         * not hold one WorkloadEntry per kept endpoint (then nothing is reused).
         */
        int[] spansInBytes() {
            int[] at = spans != null ? spans : endpointSpans(bytes);
            return at != null && at.length == 2 * endpoints.size() ? at : null;
        }
    }

    /**
     * The service-level part of an {@link EndpointMode#INLINE} translation, what a change of instances leaves as it
     * is: the resource name, the metadata labels (all valid) and the ServiceEntry's head (host, location, resolution,
     * ports; checked by {@link IstioValidation#serviceEntry}), which the kept bytes begin with. It depends only on the
     * service's host, ports, labels and origin (and on the options, fixed per translator), so it is reused while those
     * are equal. Holds no bytes: the head is the first {@code headSize} of the kept ServiceEntry's bytes.
     *
     * @param host the service's host it was made for
     * @param ports the service's ports it was made for
     * @param labels the service's labels it was made for
     * @param origin the service's origin it was made for
     * @param name the ServiceEntry's name
     * @param metadataLabels the labels on the resource
     * @param headSize the length of the head's bytes
     */
    record Head(
            String host,
            List<dev.meshbridge.core.model.ServicePort> ports,
            java.util.SortedMap<String, String> labels,
            ServiceKey origin,
            String name,
            CompactSortedMap<String> metadataLabels,
            int headSize) {

        /** Whether it was made from the same inputs as {@code service} has (identity first: the catalog shares). */
        boolean madeFrom(MeshService service) {
            return same(host, service.host())
                    && same(ports, service.ports())
                    && same(labels, service.labels())
                    && same(origin, service.origin());
        }

        private static boolean same(Object kept, Object now) {
            return kept == now || kept.equals(now);
        }
    }

    /**
     * Where each WorkloadEntry of a serialized ServiceEntry starts (after its tag and length) and its length, two ints
     * per endpoint in the order they are written; null when the bytes do not parse.
     */
    static int[] endpointSpans(ByteString serviceEntry) {
        int[] spans = new int[16];
        int n = 0;
        try {
            CodedInputStream in = serviceEntry.newCodedInput();
            for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
                if (tag != ENDPOINTS_TAG) {
                    if (!in.skipField(tag)) return null;
                    continue;
                }
                int length = in.readRawVarint32();
                if (n == spans.length) spans = Arrays.copyOf(spans, 2 * n);
                spans[n++] = in.getTotalBytesRead();
                spans[n++] = length;
                in.skipRawBytes(length);
            }
        } catch (IOException e) {
            return null;
        }
        return Arrays.copyOf(spans, n);
    }

    /** A translation and what the next translation of the same service may reuse (null for none). */
    record Translated(ServiceTranslation translation, Reuse reuse) {}

    /**
     * Translates as {@link #translate(MeshService)} does, reusing from {@code previous} (what the service's last
     * translation kept, or null) the WorkloadEntries of endpoints that did not change. The result is the same, byte for
     * byte.
     */
    Translated translate(MeshService service, Reuse previous) {
        if (options.endpointMode() == EndpointMode.INLINE) {
            Translated fast = translateInline(service, previous);
            if (fast != null) return fast;
        }
        return new Translated(translateFully(service), null);
    }

    /**
     * The translation made from scratch, every endpoint built and checked (what {@link #translate(MeshService, Reuse)}
     * must equal).
     */
    ServiceTranslation translateFully(MeshService service) {
        ServiceKey origin = service.origin();
        List<String> notes = new ArrayList<>();
        String name;
        try {
            name = resourceName(service);
        } catch (IllegalArgumentException e) {
            return refused(service, List.of("no valid resource name: " + e.getMessage()), notes);
        }

        TreeMap<String, String> metadataLabels = metadataLabels(service);
        metadataLabels.entrySet().removeIf(l -> {
            boolean invalid = !Labels.isValidKey(l.getKey()) || !Labels.isValidValue(l.getValue());
            if (invalid)
                notes.add("service label " + l.getKey() + "=" + l.getValue() + " is not a valid label; left out");
            return invalid;
        });

        Set<String> portNames = new LinkedHashSet<>();
        ServiceEntry.Builder se = head(service, portNames).addAllExportTo(options.exportTo());

        String selector = options.endpointMode() == EndpointMode.WORKLOAD_ENTRY ? selectorValue(name) : null;
        List<WorkloadEntry> workloads = new ArrayList<>();
        List<Endpoint> kept = new ArrayList<>();
        for (Endpoint e : service.endpoints()) {
            if (!e.routable() || !e.health().healthy()) continue;
            WorkloadEntry we = workload(e, portNames, selector, notes);
            if (we != null) {
                workloads.add(we);
                kept.add(e);
            }
        }

        List<McpResource> resources = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        if (options.endpointMode() == EndpointMode.INLINE) {
            se.addAllEndpoints(workloads);
            ServiceEntry built = se.build();
            problems.addAll(IstioValidation.serviceEntry(built));
            resources.add(McpResource.of(
                    McpKind.SERVICE_ENTRY, options.namespace(), name, metadataLabels, built, service.host()));
        } else {
            se.setWorkloadSelector(WorkloadSelector.newBuilder().putLabels(LABEL_SERVICE, selector));
            ServiceEntry built = se.build();
            problems.addAll(IstioValidation.serviceEntry(built));
            resources.add(McpResource.of(
                    McpKind.SERVICE_ENTRY, options.namespace(), name, metadataLabels, built, service.host()));
            Set<String> names = new HashSet<>();
            for (int i = 0; i < workloads.size(); i++) {
                Endpoint e = kept.get(i);
                WorkloadEntry we = workloads.get(i);
                String weName = workloadName(name, e);
                if (!names.add(weName)) {
                    notes.add("endpoint " + describe(e) + " has the same WorkloadEntry name as another; left out");
                    continue;
                }
                for (String p : IstioValidation.workloadEntry(we, portNames)) {
                    problems.add("WorkloadEntry " + weName + ": " + p);
                }
                resources.add(McpResource.of(
                        McpKind.WORKLOAD_ENTRY, options.namespace(), weName, metadataLabels, we, service.host()));
            }
        }
        if (!problems.isEmpty()) return refused(service, problems, notes);
        return new ServiceTranslation(
                service.host(), service.version(), origin.registry(), resources, List.of(), notes);
    }

    /** The ServiceEntry's name, from the {@code resourceName} template; throws when it makes no valid name. */
    private String resourceName(MeshService service) {
        ServiceKey origin = service.origin();
        return options.resourceName()
                .render(Map.of(
                        "host", service.host(),
                        "registry", origin.registry(),
                        "registryType", origin.registryType()));
    }

    /** The labels on every resource of a service, before invalid ones are left out. */
    private TreeMap<String, String> metadataLabels(MeshService service) {
        ServiceKey origin = service.origin();
        TreeMap<String, String> labels = new TreeMap<>(service.labels());
        labels.put(LABEL_MANAGED_BY, MANAGED_BY);
        labels.put(LABEL_REGISTRY, origin.registry());
        labels.put(LABEL_REGISTRY_TYPE, origin.registryType());
        if (!options.revision().isEmpty()) labels.put(LABEL_REVISION, options.revision());
        return labels;
    }

    private static final int ENDPOINTS_TAG = (ServiceEntry.ENDPOINTS_FIELD_NUMBER << 3) | 2;

    /**
     * {@link EndpointMode#INLINE}: the ServiceEntry's bytes written as deterministic serialization writes them (fields
     * 1 to 5, the endpoints (6), export_to (7)), each unchanged endpoint's WorkloadEntry copied from {@code previous}.
     * Returns null when anything is refused or noted at the service level, so that {@link #translateFully} says it
     * exactly as before.
     */
    private Translated translateInline(MeshService service, Reuse previous) {
        ServiceKey origin = service.origin();
        Head head = previous != null && previous.bytes() != null ? previous.head() : null;
        ByteString headBytes;
        Set<String> portNames = new LinkedHashSet<>();
        if (head != null && head.madeFrom(service)) {
            headBytes = previous.bytes().substring(0, head.headSize());
            for (dev.meshbridge.core.model.ServicePort port : service.ports()) portNames.add(port.name());
        } else {
            String name;
            try {
                name = resourceName(service);
            } catch (IllegalArgumentException e) {
                return null;
            }
            TreeMap<String, String> metadataLabels = metadataLabels(service);
            for (Map.Entry<String, String> l : metadataLabels.entrySet()) {
                if (!Labels.isValidKey(l.getKey()) || !Labels.isValidValue(l.getValue())) return null;
            }
            ServiceEntry headMessage = head(service, portNames).build();
            // the service-level rules, on the ServiceEntry without its endpoints (each made to keep them, see
            // workloadBytes) and without export_to (McpOptions refuses an export_to the rules refuse)
            if (!IstioValidation.serviceEntry(headMessage).isEmpty()) return null;
            headBytes = McpResource.deterministicBytes(headMessage);
            head = new Head(
                    service.host(),
                    service.ports(),
                    service.labels(),
                    origin,
                    name.equals(service.host()) ? service.host() : name, // held per service: no second copy
                    CompactSortedMap.copyOf(metadataLabels),
                    headBytes.size());
        }
        String name = head.name();
        int[] previousSpans =
                previous != null && previous.bytes() != null && previous.ports().equals(service.ports())
                        ? previous.spansInBytes()
                        : null;
        boolean reusable = previousSpans != null;

        List<String> notes = new ArrayList<>();
        LabelBytes labelBytes = new LabelBytes();
        int n = service.endpoints().size();
        Endpoint[] kept = new Endpoint[n];
        // per endpoint kept: reused (offset in previous bytes, length) or newly made (bytes)
        int[] fromOffset = new int[n];
        int[] length = new int[n];
        ByteString[] made = new ByteString[n];
        boolean[] cacheable = new boolean[n];
        int count = 0;
        int p = 0; // walks previous.endpoints(), sorted as the catalog sorts endpoints
        for (Endpoint e : service.endpoints()) {
            if (!e.routable() || !e.health().healthy()) continue;
            int found = -1;
            if (reusable) {
                // both lists are in the catalog's order, which sorts by address first: compare addresses (the full
                // order formats ports and labels), then look for an equal endpoint among those of the same address
                List<Endpoint> old = previous.endpoints();
                while (p < old.size() && old.get(p).compareAddress(e) < 0) p++;
                for (int q = p; q < old.size() && old.get(q).sameAddress(e); q++) {
                    if (old.get(q).equals(e)) {
                        found = q;
                        p = q + 1;
                        break;
                    }
                }
            }
            if (found >= 0) {
                fromOffset[count] = previousSpans[2 * found];
                length[count] = previousSpans[2 * found + 1];
                cacheable[count] = true;
            } else {
                int notesBefore = notes.size();
                made[count] = workloadBytes(e, portNames, notes, labelBytes);
                if (made[count] == null) continue;
                length[count] = made[count].size();
                cacheable[count] = notes.size() == notesBefore;
            }
            kept[count++] = e;
        }

        ByteString tailBytes = exportToBytes;
        int size = headBytes.size() + tailBytes.size();
        for (int i = 0; i < count; i++) {
            size += CodedOutputStream.computeTagSize(ServiceEntry.ENDPOINTS_FIELD_NUMBER)
                    + CodedOutputStream.computeUInt32SizeNoTag(length[i])
                    + length[i];
        }
        byte[] out = new byte[size];
        headBytes.copyTo(out, 0);
        int at = headBytes.size();
        List<Endpoint> nextEndpoints = new ArrayList<>(count);
        int[] spans = new int[2 * count];
        int cached = 0;
        for (int i = 0; i < count; i++) {
            at = PackedBytes.writeVarint(out, at, ENDPOINTS_TAG);
            at = PackedBytes.writeVarint(out, at, length[i]);
            if (made[i] != null) made[i].copyTo(out, at);
            else previous.bytes().copyTo(out, fromOffset[i], at, length[i]);
            if (cacheable[i]) {
                nextEndpoints.add(kept[i]);
                spans[2 * cached] = at;
                spans[2 * cached++ + 1] = length[i];
            }
            at += length[i];
        }
        tailBytes.copyTo(out, at);
        ByteString bytes = UnsafeByteOperations.unsafeWrap(out); // the array is never touched again
        List<McpResource> resources = List.of(McpResource.of(
                McpKind.SERVICE_ENTRY,
                options.namespace(),
                name,
                head.metadataLabels(),
                ServiceEntry.getDescriptor().getFullName(),
                bytes,
                service.host()));
        Reuse next = new Reuse(
                service.ports(),
                // the catalog's own list when every endpoint is kept (the usual case): nothing copied
                cached == service.endpoints().size() ? service.endpoints() : List.copyOf(nextEndpoints),
                cached == count ? null : Arrays.copyOf(spans, 2 * cached),
                bytes,
                head);
        return new Translated(
                new ServiceTranslation(
                        service.host(), service.version(), origin.registry(), resources, List.of(), notes),
                next);
    }

    private static final int WE_PORTS_TAG = (WorkloadEntry.PORTS_FIELD_NUMBER << 3) | 2;
    private static final int WE_LABELS_TAG = (WorkloadEntry.LABELS_FIELD_NUMBER << 3) | 2;

    /**
     * The bytes of {@link #workload}'s WorkloadEntry (without a selector), as deterministic serialization writes them
     * (fields in number order, map entries sorted by key, each entry with its key and value), with the same notes;
     * null when it leaves the endpoint out. Nothing to check after: the address is an IP (checked here), the ports
     * kept are the ServiceEntry's (checked as DNS-1123 labels with it) and in 1..65535 ({@link Endpoint} refuses
     * others), the labels valid ({@link Endpoint} refuses others), and the locality is written only when {@link
     * #locality} made it of whole parts, which is what {@link IstioValidation#workloadEntry} checks.
     */
    static ByteString workloadBytes(Endpoint e, Set<String> portNames, List<String> notes) {
        return workloadBytes(e, portNames, notes, new LabelBytes());
    }

    /**
     * The {@code labels} fields of the last label map written: the endpoints of a service mostly share one (the
     * catalog interns equal maps), so it is written once per service.
     */
    static final class LabelBytes {
        private Map<String, String> labels;
        private byte[] bytes;

        byte[] of(java.util.SortedMap<String, String> map) {
            if (map == labels) return bytes;
            Map<String, String> sorted = naturalOrder(map);
            int size = 0;
            for (Map.Entry<String, String> l : sorted.entrySet()) {
                int entry = labelEntrySize(l);
                size += 1 + CodedOutputStream.computeUInt32SizeNoTag(entry) + entry;
            }
            byte[] out = new byte[size];
            CodedOutputStream coded = CodedOutputStream.newInstance(out);
            try {
                for (Map.Entry<String, String> l : sorted.entrySet()) {
                    coded.writeUInt32NoTag(WE_LABELS_TAG);
                    coded.writeUInt32NoTag(labelEntrySize(l));
                    coded.writeString(1, l.getKey());
                    coded.writeString(2, l.getValue());
                }
            } catch (java.io.IOException x) {
                throw new java.io.UncheckedIOException(x);
            }
            coded.checkNoSpaceLeft();
            labels = map;
            bytes = out;
            return out;
        }
    }

    static ByteString workloadBytes(Endpoint e, Set<String> portNames, List<String> notes, LabelBytes labelBytes) {
        String address = e.address();
        if (!IpLiterals.isIp(address)) {
            notes.add("endpoint " + describe(e) + " left out: '" + address
                    + "' is not an IP address, and a STATIC ServiceEntry needs one");
            return null;
        }
        Map<String, Integer> ports = naturalOrder(e.ports());
        int size = CodedOutputStream.computeStringSize(WorkloadEntry.ADDRESS_FIELD_NUMBER, address);
        int kept = 0;
        for (Map.Entry<String, Integer> port : ports.entrySet()) {
            if (portNames.contains(port.getKey())) {
                int entry = portEntrySize(port);
                size += 1 + CodedOutputStream.computeUInt32SizeNoTag(entry) + entry;
                kept++;
            } else {
                notes.add("endpoint " + describe(e) + ": port '" + port.getKey() + "' is not a port of the service "
                        + portNames + "; left out");
            }
        }
        if (kept == 0) {
            notes.add("endpoint " + describe(e) + " left out: none of its ports is a port of the service");
            return null;
        }
        byte[] labels = labelBytes.of(e.labels());
        size += labels.length;
        String locality = locality(e.locality());
        if (locality == null) {
            notes.add("endpoint " + describe(e) + ": locality " + e.locality()
                    + " cannot be written as region/zone/subzone; left out");
        } else if (!locality.isEmpty()) {
            size += CodedOutputStream.computeStringSize(WorkloadEntry.LOCALITY_FIELD_NUMBER, locality);
        }
        if (e.weight() != 0) size += CodedOutputStream.computeUInt32Size(WorkloadEntry.WEIGHT_FIELD_NUMBER, e.weight());
        byte[] bytes = new byte[size];
        CodedOutputStream out = CodedOutputStream.newInstance(bytes);
        try {
            out.writeString(WorkloadEntry.ADDRESS_FIELD_NUMBER, address);
            for (Map.Entry<String, Integer> port : ports.entrySet()) {
                if (!portNames.contains(port.getKey())) continue;
                out.writeUInt32NoTag(WE_PORTS_TAG);
                out.writeUInt32NoTag(portEntrySize(port));
                out.writeString(1, port.getKey());
                out.writeUInt32(2, port.getValue());
            }
            out.writeRawBytes(labels);
            if (locality != null && !locality.isEmpty()) out.writeString(WorkloadEntry.LOCALITY_FIELD_NUMBER, locality);
            if (e.weight() != 0) out.writeUInt32(WorkloadEntry.WEIGHT_FIELD_NUMBER, e.weight());
        } catch (java.io.IOException x) {
            throw new java.io.UncheckedIOException(x);
        }
        out.checkNoSpaceLeft();
        return UnsafeByteOperations.unsafeWrap(bytes); // the array is never touched again
    }

    private static int portEntrySize(Map.Entry<String, Integer> port) {
        return CodedOutputStream.computeStringSize(1, port.getKey())
                + CodedOutputStream.computeUInt32Size(2, port.getValue());
    }

    private static int labelEntrySize(Map.Entry<String, String> label) {
        return CodedOutputStream.computeStringSize(1, label.getKey())
                + CodedOutputStream.computeStringSize(2, label.getValue());
    }

    /** The map in its keys' natural order (the order deterministic serialization writes map entries in). */
    private static <V> Map<String, V> naturalOrder(java.util.SortedMap<String, V> m) {
        return m.comparator() == null ? m : new TreeMap<>(m);
    }

    private static ServiceTranslation refused(MeshService service, List<String> problems, List<String> notes) {
        return new ServiceTranslation(
                service.host(), service.version(), service.origin().registry(), List.of(), problems, notes);
    }

    /**
     * The endpoint as an Istio workload, or null (with a note) when a STATIC ServiceEntry cannot carry it.
     *
     * @param selector the value of {@value #LABEL_SERVICE} in WorkloadEntry mode, else null
     */
    static WorkloadEntry workload(Endpoint e, Set<String> portNames, String selector, List<String> notes) {
        if (!IpLiterals.isIp(e.address())) {
            notes.add("endpoint " + describe(e) + " left out: '" + e.address()
                    + "' is not an IP address, and a STATIC ServiceEntry needs one");
            return null;
        }
        WorkloadEntry.Builder we = WorkloadEntry.newBuilder().setAddress(e.address());
        for (Map.Entry<String, Integer> port : e.ports().entrySet()) {
            if (portNames.contains(port.getKey())) {
                we.putPorts(port.getKey(), port.getValue());
            } else {
                notes.add("endpoint " + describe(e) + ": port '" + port.getKey() + "' is not a port of the service "
                        + portNames + "; left out");
            }
        }
        if (we.getPortsCount() == 0) {
            notes.add("endpoint " + describe(e) + " left out: none of its ports is a port of the service");
            return null;
        }
        for (Map.Entry<String, String> l : e.labels().entrySet()) {
            if (Labels.isValidKey(l.getKey()) && Labels.isValidValue(l.getValue())) {
                we.putLabels(l.getKey(), l.getValue());
            }
        }
        if (selector != null) we.putLabels(LABEL_SERVICE, selector);
        String locality = locality(e.locality());
        if (locality == null) {
            notes.add("endpoint " + describe(e) + ": locality " + e.locality()
                    + " cannot be written as region/zone/subzone; left out");
        } else if (!locality.isEmpty()) {
            we.setLocality(locality);
        }
        we.setWeight(e.weight());
        return we.build();
    }

    /** {@code region[/zone[/subzone]]}, "" for none, null when a part is missing in the middle or holds a slash. */
    static String locality(Locality l) {
        if (l.isEmpty()) return "";
        String[] parts = {l.region(), l.zone(), l.subZone()};
        int last = parts.length - 1;
        while (parts[last].isEmpty()) last--;
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i <= last; i++) {
            if (parts[i].isEmpty() || parts[i].contains("/")) return null;
            if (i > 0) sb.append('/');
            sb.append(parts[i]);
        }
        return sb.toString();
    }

    /** The selector label value for a ServiceEntry name: the name when it is a valid label value, else a hashed cut. */
    static String selectorValue(String name) {
        if (Labels.isValidValue(name)) return name;
        String cut = name.substring(0, 46);
        while (!cut.isEmpty() && !Character.isLetterOrDigit(cut.charAt(cut.length() - 1))) {
            cut = cut.substring(0, cut.length() - 1);
        }
        return cut + "-" + Hash64.toHex(Hash64.of(name));
    }

    /**
     * The WorkloadEntry name of an instance: {@code <serviceEntryName>.<a-b-c-d>-<port>[-<port>...]} for IPv4, a hash
     * in place of the address for IPv6, and a hash of everything when the result would be too long.
     */
    static String workloadName(String serviceEntryName, Endpoint e) {
        StringBuilder ports = new StringBuilder();
        for (int p : e.ports().values()) ports.append('-').append(p);
        String address = e.address().indexOf(':') >= 0
                ? "ip6-" + Hash64.toHex(Hash64.of(e.address())).substring(0, 12)
                : e.address().replace('.', '-');
        String label = address + ports;
        String key = e.address() + e.ports();
        if (label.length() > Dns1123.MAX_LABEL) label = "ep-" + Hash64.toHex(Hash64.of(key));
        String name = serviceEntryName + "." + label;
        if (name.length() > Dns1123.MAX_SUBDOMAIN) {
            String hashed = "ep-" + Hash64.toHex(Hash64.of(serviceEntryName + "\n" + key));
            String prefix = serviceEntryName.substring(0, Dns1123.MAX_SUBDOMAIN - hashed.length() - 1);
            while (!prefix.isEmpty() && !Character.isLetterOrDigit(prefix.charAt(prefix.length() - 1))) {
                prefix = prefix.substring(0, prefix.length() - 1);
            }
            name = prefix + "." + hashed;
        }
        return name;
    }

    private static String describe(Endpoint e) {
        return e.address() + e.ports();
    }

    /**
     * The ServiceEntry's head: its host, location, resolution and ports (no export_to, no endpoints); adds each port's
     * name to {@code portNames}.
     */
    private static ServiceEntry.Builder head(MeshService service, Set<String> portNames) {
        ServiceEntry.Builder head = ServiceEntry.newBuilder()
                .addHosts(service.host())
                .setLocation(ServiceEntry.Location.MESH_INTERNAL)
                .setResolution(ServiceEntry.Resolution.STATIC);
        for (dev.meshbridge.core.model.ServicePort p : service.ports()) {
            head.addPorts(ServicePort.newBuilder()
                    .setNumber(p.number())
                    .setProtocol(IstioProtocols.of(p.protocol()))
                    .setName(p.name()));
            portNames.add(p.name());
        }
        return head;
    }
}
