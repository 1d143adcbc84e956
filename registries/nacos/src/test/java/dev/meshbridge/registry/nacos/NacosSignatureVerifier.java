package dev.meshbridge.registry.nacos;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The one check of an access-key signature the Nacos test server applies to every naming request, whatever carries
 * it: the {@code ak}, {@code data} and {@code signature} headers of a gRPC request sent by nacos-client, and the
 * same three query parameters of the watcher's HTTP calls. {@code data} is {@code <millis>} or
 * {@code <millis>@@<group>@@<service>}; the signature is Base64 of HMAC-SHA1 over {@code data} with the secret key;
 * the time must be within {@link #MAX_SKEW} of the server's clock, and the service (when named) must be the one the
 * request is about.
 */
final class NacosSignatureVerifier {

    static final Duration MAX_SKEW = Duration.ofMinutes(5);

    private final Map<String, String> secretKeys;
    private final Clock clock;
    private final Map<String, AtomicLong> accepted = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> refused = new ConcurrentHashMap<>();

    NacosSignatureVerifier(Map<String, String> secretKeys, Clock clock) {
        this.secretKeys = Map.copyOf(secretKeys);
        this.clock = clock;
    }

    /**
     * Why the request is refused, or null when its signature is good.
     *
     * @param channel {@code grpc} or {@code http}, for {@link #accepted}
     * @param field the request's {@code ak}, {@code data} and {@code signature}
     * @param groupedService {@code group@@service} when the request is about one service, else null
     */
    String problem(String channel, Function<String, String> field, String groupedService) {
        String why = check(field, groupedService);
        (why == null ? accepted : refused)
                .computeIfAbsent(channel, c -> new AtomicLong())
                .incrementAndGet();
        return why;
    }

    long accepted(String channel) {
        AtomicLong n = accepted.get(channel);
        return n == null ? 0 : n.get();
    }

    long refused(String channel) {
        AtomicLong n = refused.get(channel);
        return n == null ? 0 : n.get();
    }

    private String check(Function<String, String> field, String groupedService) {
        String ak = field.apply("ak");
        String data = field.apply("data");
        String signature = field.apply("signature");
        if (ak == null || data == null || signature == null) return "access key signature missing!";
        String sk = secretKeys.get(ak);
        if (sk == null) return "unknown access key!";
        int at = data.indexOf("@@");
        long millis;
        try {
            millis = Long.parseLong(at < 0 ? data : data.substring(0, at));
        } catch (NumberFormatException e) {
            return "signature data malformed!";
        }
        if (Math.abs(clock.millis() - millis) > MAX_SKEW.toMillis()) return "signature expired!";
        if (at >= 0 && groupedService != null && !data.substring(at + 2).equals(groupedService)) {
            return "signature is for another resource!";
        }
        byte[] expected = hmacSha1(sk, data);
        byte[] given;
        try {
            given = Base64.getDecoder().decode(signature);
        } catch (IllegalArgumentException e) {
            return "signature malformed!";
        }
        return MessageDigest.isEqual(expected, given) ? null : "signature mismatch!";
    }

    private static byte[] hmacSha1(String key, String data) {
        try {
            Mac mac = Mac.getInstance("HmacSHA1");
            mac.init(new SecretKeySpec(key.getBytes(StandardCharsets.UTF_8), "HmacSHA1"));
            return mac.doFinal(data.getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }
}
