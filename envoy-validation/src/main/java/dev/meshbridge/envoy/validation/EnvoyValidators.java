package dev.meshbridge.envoy.validation;

import com.google.protobuf.Any;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import io.envoyproxy.pgv.ReflectiveValidatorIndex;
import io.envoyproxy.pgv.ValidationException;
import io.envoyproxy.pgv.Validator;
import io.envoyproxy.pgv.ValidatorIndex;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Envoy's first check of everything it receives, done with the validators protoc-gen-validate generates from the
 * Envoy API's own {@code .proto} files (the same rules Envoy's C++ validators are generated from): a resource that
 * breaks one is what Envoy NACKs with "Proto constraint validation failed".
 *
 * <p>As Envoy does, a typed config packed in an {@code Any} (a filter's {@code typed_config}, a transport socket,
 * upstream protocol options) is checked too, with its own type's rules, when its type is one of {@link #TYPED_CONFIGS}
 * (Envoy validates each extension's config when it instantiates the extension). An {@code Any} of another type is
 * reported: the bridge sends no typed config this oracle cannot judge.
 *
 * <p>A message type without a generated validator is an error, never a silent pass (PGV's own index would treat it
 * as valid): {@link #missingValidator} names it.
 */
public final class EnvoyValidators {

    /** The typed configs the bridge packs into resources, by type URL. */
    public static final Map<String, Message> TYPED_CONFIGS = Stream.of(
                    io.envoyproxy.envoy.config.cluster.v3.Cluster.getDefaultInstance(),
                    io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment.getDefaultInstance(),
                    io.envoyproxy.envoy.config.listener.v3.Listener.getDefaultInstance(),
                    io.envoyproxy.envoy.config.route.v3.RouteConfiguration.getDefaultInstance(),
                    io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.Secret.getDefaultInstance(),
                    io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext.getDefaultInstance(),
                    io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext.getDefaultInstance(),
                    io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
                            .getDefaultInstance(),
                    io.envoyproxy.envoy.extensions.filters.http.router.v3.Router.getDefaultInstance(),
                    io.envoyproxy.envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector.getDefaultInstance(),
                    io.envoyproxy.envoy.extensions.filters.network.dubbo_proxy.v3.DubboProxy.getDefaultInstance(),
                    io.envoyproxy.envoy.extensions.filters.network.dubbo_proxy.v3.MultipleRouteConfiguration
                            .getDefaultInstance(),
                    io.envoyproxy.envoy.extensions.filters.network.dubbo_proxy.router.v3.Router.getDefaultInstance(),
                    io.envoyproxy.envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy.getDefaultInstance(),
                    io.envoyproxy.envoy.extensions.upstreams.http.v3.HttpProtocolOptions.getDefaultInstance())
            .collect(Collectors.toUnmodifiableMap(
                    m -> "type.googleapis.com/" + m.getDescriptorForType().getFullName(), m -> m));

    /**
     * What PGV's index falls back to for a class with no generated validator. PGV generates none for a {@code .proto}
     * file that has no rule (one that does not import {@code validate.proto}); the messages such a type holds may
     * have rules of their own, so they are checked here (as Envoy's generated C++ does). Any other Envoy type that
     * reaches this point is an error.
     */
    private static final ValidatorIndex FALLBACK = new ValidatorIndex() {
        @Override
        @SuppressWarnings("unchecked")
        public <T> Validator<T> validatorFor(Class clazz) {
            if (clazz.getName().startsWith("com.google.protobuf."))
                return ValidatorIndex.ALWAYS_VALID.validatorFor(clazz);
            return proto -> {
                Message m = (Message) proto;
                if (hasRules(m)) throw new ValidationException(clazz.getName(), proto, missingValidator(clazz));
                for (Map.Entry<FieldDescriptor, Object> e : m.getAllFields().entrySet()) {
                    if (e.getKey().getJavaType() != FieldDescriptor.JavaType.MESSAGE) continue;
                    if (e.getKey().isRepeated()) {
                        for (Object item : (List<?>) e.getValue()) nested(item);
                    } else {
                        nested(e.getValue());
                    }
                }
            };
        }
    };

    private static void nested(Object value) throws ValidationException {
        Message m = (Message) value;
        if (m.getDescriptorForType().getOptions().getMapEntry()) {
            value = m.getField(m.getDescriptorForType().findFieldByName("value"));
            if (!(value instanceof Message)) return;
        }
        INDEX.validatorFor(value).assertValid(value);
    }

    /** Whether the file a message type is declared in can hold validation rules (it imports validate.proto). */
    public static boolean hasRules(Message m) {
        return m.getDescriptorForType().getFile().getDependencies().stream()
                .anyMatch(d -> d.getName().equals("validate/validate.proto"));
    }

    private static final ValidatorIndex INDEX = new ReflectiveValidatorIndex(FALLBACK);

    private EnvoyValidators() {}

    /** The problem reported for a message type that has no generated validator. */
    public static String missingValidator(Class<?> type) {
        return "no protoc-gen-validate validator was generated for " + type.getName()
                + " (add its .proto file to envoy-validation's includes)";
    }

    /**
     * Every rule {@code message} breaks, and those the typed configs inside it break (one per message: PGV stops at
     * the first broken rule of a message, as Envoy does); empty when it is valid.
     */
    public static List<String> validate(Message message) {
        List<String> out = new ArrayList<>();
        check(message, message.getDescriptorForType().getName(), out);
        return out;
    }

    /** Throws {@link AssertionError} naming every broken rule; for tests. */
    public static void assertValid(String what, Message message) {
        List<String> problems = validate(message);
        if (!problems.isEmpty()) throw new AssertionError(what + " breaks Envoy's validation rules: " + problems);
    }

    private static void check(Message message, String path, List<String> out) {
        if (message instanceof Any any) {
            Message type = TYPED_CONFIGS.get(any.getTypeUrl());
            if (type == null) {
                out.add(path + ": typed config " + any.getTypeUrl() + " is not one this oracle knows");
                return;
            }
            try {
                check(type.getParserForType().parseFrom(any.getValue()), path, out);
            } catch (InvalidProtocolBufferException e) {
                out.add(path + ": does not parse as " + any.getTypeUrl() + ": " + e.getMessage());
            }
            return;
        }
        try {
            INDEX.validatorFor(message).assertValid(message);
        } catch (ValidationException e) {
            out.add(path + ": " + e.getMessage());
        }
        anys(message, path, out);
    }

    /** Looks for the {@code Any} fields anywhere inside {@code message} and checks what they hold. */
    private static void anys(Message message, String path, List<String> out) {
        for (Map.Entry<FieldDescriptor, Object> e : message.getAllFields().entrySet()) {
            FieldDescriptor f = e.getKey();
            if (f.getJavaType() != FieldDescriptor.JavaType.MESSAGE) continue;
            String at = path + "." + f.getName();
            if (f.isMapField()) {
                for (Object entry : (List<?>) e.getValue()) {
                    Message m = (Message) entry;
                    Object value = m.getField(m.getDescriptorForType().findFieldByName("value"));
                    Object key = m.getField(m.getDescriptorForType().findFieldByName("key"));
                    if (value instanceof Message v) inner(v, at + "[" + key + "]", out);
                }
            } else if (f.isRepeated()) {
                List<?> items = (List<?>) e.getValue();
                for (int i = 0; i < items.size(); i++) inner((Message) items.get(i), at + "[" + i + "]", out);
            } else {
                inner((Message) e.getValue(), at, out);
            }
        }
    }

    private static void inner(Message m, String path, List<String> out) {
        if (m instanceof Any) {
            check(m, path, out);
        } else if (!m.getDescriptorForType().getFullName().startsWith("google.protobuf.")) {
            anys(m, path, out);
        }
    }
}
