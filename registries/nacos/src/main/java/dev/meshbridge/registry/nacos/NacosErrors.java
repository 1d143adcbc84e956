package dev.meshbridge.registry.nacos;

import com.alibaba.nacos.api.exception.NacosException;
import java.net.ConnectException;
import java.net.UnknownHostException;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import java.util.Locale;

/**
 * What a failed call to Nacos means, in words a user can act on: the server cannot be reached (and why, never "null"),
 * the credentials are wrong ("authentication failed ... check nacosUsername and nacosPassword"), or the user lacks a
 * permission (which one, and on what). Never includes a password.
 */
final class NacosErrors {

    /** What went wrong. */
    enum Kind {
        UNREACHABLE,
        AUTHENTICATION,
        PERMISSION
    }

    /** A failure of a gRPC call about one namespace: the namespace is part of what the user must fix. */
    static final class InNamespace extends NacosException {
        private final String namespace;

        InNamespace(String namespace, NacosException cause) {
            super(cause.getErrCode(), cause.getErrMsg(), cause);
            this.namespace = namespace;
        }

        String namespace() {
            return namespace;
        }
    }

    private NacosErrors() {}

    /** Wraps a gRPC failure with the namespace it was about. */
    static NacosException inNamespace(String namespace, Exception e) {
        if (e instanceof InNamespace n) return n;
        NacosException ne = e instanceof NacosException x
                ? x
                : new NacosException(NacosException.CLIENT_INVALID_PARAM, cause(e), e);
        return new InNamespace(namespace, ne);
    }

    static Kind kind(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof NacosHttpApi.PermissionException) return Kind.PERMISSION;
            if (c instanceof NacosHttpApi.AuthException) return Kind.AUTHENTICATION;
            if (c instanceof NacosException ne && ne.getErrCode() == NacosException.NO_RIGHT) {
                return refusedPermission(ne.getErrMsg()) ? Kind.PERMISSION : Kind.AUTHENTICATION;
            }
        }
        return Kind.UNREACHABLE;
    }

    /**
     * A Nacos server says "authorization failed!" when the user is known but its roles lack the permission; anything
     * else on a 403 (user not found, token invalid or expired) is about the credentials.
     */
    static boolean refusedPermission(String message) {
        return message != null && message.toLowerCase(Locale.ROOT).contains("authorization failed");
    }

    /** One line saying what happened and what to do. */
    static String describe(Throwable e, NacosOptions options) {
        if (e instanceof NacosHttpApi.AuthException) return "authentication failed: " + e.getMessage();
        if (e instanceof NacosHttpApi.PermissionException) return "permission denied: " + e.getMessage();
        if (e instanceof NacosException ne) {
            String namespace = e instanceof InNamespace n ? n.namespace() : null;
            String message = message(ne);
            if (ne.getErrCode() == NacosException.NO_RIGHT) {
                if (refusedPermission(message)) {
                    String ns = namespace == null ? "the namespace" : "namespace '" + namespace + "'";
                    return "permission denied: Nacos refused to let " + user(options) + " read " + ns + " (403: "
                            + message + "); give the user's role read permission (r) on " + ns + " (resource "
                            + (namespace == null ? "<namespace>" : namespace) + ":*:*)";
                }
                return "authentication failed: Nacos refused the credentials of " + user(options)
                        + (namespace == null ? "" : " for namespace '" + namespace + "'") + " (403: " + message
                        + "); " + check(options);
            }
            return "Nacos error " + ne.getErrCode() + (namespace == null ? "" : " in namespace '" + namespace + "'")
                    + ": " + message;
        }
        String m = e.getMessage();
        return m != null && !m.isBlank() && !m.equals("null") ? m : cause(e);
    }

    /** A NacosException's message, or what its cause says when it has none. */
    private static String message(NacosException ne) {
        String m = ne.getErrMsg();
        if (m != null && !m.isBlank() && !m.equals("null")) return m;
        Throwable c = ne.getCause();
        if (c != null && c != ne) return cause(c);
        return switch (ne.getErrCode()) {
            case NacosException.CLIENT_DISCONNECT ->
                "not connected to the server (nacos-client reaches it on gRPC, the" + " HTTP port + 1000)";
            case NacosException.SERVER_ERROR -> "the server failed";
            default -> "no message (code " + ne.getErrCode() + ")";
        };
    }

    /**
     * What a low-level failure means: the first cause that says something, with the common network failures named
     * (a refused connection, an unknown host, a timeout); never {@code null}.
     */
    static String cause(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof ConnectException) return "connection refused" + detail(c);
            if (c instanceof HttpConnectTimeoutException) return "connection timed out";
            if (c instanceof javax.net.ssl.SSLException) {
                String why = deepest(c).getMessage();
                return "TLS handshake failed" + (why == null ? "" : ": " + why)
                        + "; check tls.caFile (the CA of the Nacos"
                        + " servers' certificates), tls.certFile and tls.keyFile";
            }
            if (c instanceof HttpTimeoutException) return "no answer in time";
            if (c instanceof UnknownHostException || c instanceof UnresolvedAddressException) {
                return "unknown host" + detail(c);
            }
        }
        for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
            String m = c.getMessage();
            if (m != null && !m.isBlank() && !m.equals("null")) return m;
        }
        return e.getClass().getSimpleName();
    }

    /** The innermost cause that has a message (a PKIX or handshake reason, rather than its wrapper). */
    private static Throwable deepest(Throwable e) {
        Throwable found = e;
        for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c.getMessage() != null && !c.getMessage().isBlank()) found = c;
        }
        return found;
    }

    private static String detail(Throwable c) {
        String m = c.getMessage();
        return m == null || m.isBlank() ? "" : " (" + m + ")";
    }

    private static String user(NacosOptions options) {
        if (options.username() != null) {
            try {
                return "user '" + options.username().resolve() + "'";
            } catch (IllegalStateException e) {
                return "the user from " + options.username().describe();
            }
        }
        if (options.accessKey() != null)
            return "the access key from " + options.accessKey().describe();
        return "an anonymous client (no nacosUsername)";
    }

    private static String check(NacosOptions options) {
        if (options.accessKey() != null) return "check nacosAccessKey and nacosSecretKey";
        if (options.username() == null) return "the server has auth on: set nacosUsername and nacosPassword";
        return "check nacosUsername and nacosPassword";
    }
}
