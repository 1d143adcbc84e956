package dev.meshbridge.xds;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.EnumValueDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.OneofDescriptor;
import com.google.protobuf.Duration;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import dev.meshbridge.core.naming.IpAddresses;
import io.envoyproxy.pgv.validate.Validate;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * The first check Envoy applies to every resource it receives: the protoc-gen-validate rules written into the Envoy
 * API's {@code .proto} files ({@code (validate.rules)}, {@code (validate.required)} on oneofs), read from the message
 * descriptors, including the messages packed into {@code Any} fields when their type is known here. A resource that
 * breaks one is what Envoy NACKs with "Proto constraint validation failed".
 *
 * <p>Covers the rules of scalar, string, bytes, enum, message, repeated, map, Any and Duration fields and the
 * well-known string formats Envoy uses (hostname, IP, address, HTTP header name and value); timestamps and e-mail or
 * URI formats are not checked.
 */
final class ProtoRules {

    private static final Map<String, Pattern> PATTERNS = new ConcurrentHashMap<>();
    private static final Pattern HEADER_NAME_STRICT = Pattern.compile("^:?[0-9a-zA-Z!#$%&'*+\\-.^_|~`]+$");
    private static final Pattern HEADER_VALUE_STRICT = Pattern.compile("^[^\\u0000-\\u0008\\u000A-\\u001F\\u007F]*$");
    /** PGV's non-strict pattern for header names and values alike: it allows the empty string. */
    private static final Pattern HEADER_LOOSE = Pattern.compile("^[^\\u0000\\u000A\\u000D]*$");

    private static final Pattern HOSTNAME = Pattern.compile(
            "^(?=.{1,253}$)([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)(\\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}"
                    + "[a-zA-Z0-9])?)*\\.?$");

    private final Map<String, Message> anyTypes;

    /** @param anyTypes the message types to look into when an {@code Any} field holds them */
    ProtoRules(List<Message> anyTypes) {
        Map<String, Message> m = new java.util.HashMap<>();
        for (Message t : anyTypes)
            m.put("type.googleapis.com/" + t.getDescriptorForType().getFullName(), t);
        this.anyTypes = Map.copyOf(m);
    }

    /** Every rule {@code message} (and what it holds) breaks, as {@code field.path: what}; empty when none. */
    List<String> check(Message message) {
        List<String> out = new ArrayList<>();
        message(message, new FieldPath(null, message.getDescriptorForType().getName(), -1, null), out);
        return out;
    }

    /** Where a value is, rendered only when a rule breaks: {@code Type.field[2].field[key]}. */
    private record FieldPath(FieldPath parent, String name, int index, Object key) {
        FieldPath field(String field) {
            return new FieldPath(this, field, -1, null);
        }

        FieldPath at(int i) {
            return new FieldPath(parent, name, i, key);
        }

        FieldPath key(Object k) {
            return new FieldPath(parent, name, -1, k);
        }

        @Override
        public String toString() {
            StringBuilder sb = new StringBuilder();
            if (parent != null) sb.append(parent).append('.');
            sb.append(name);
            if (index >= 0) sb.append('[').append(index).append(']');
            if (key != null) sb.append('[').append(key).append(']');
            return sb.toString();
        }
    }

    /**
     * What to look at in a message type, worked out once per type: the oneofs that must be set, and the fields that
     * have rules or hold messages (scalar fields without rules are skipped).
     */
    private record Plan(boolean disabled, List<OneofDescriptor> requiredOneofs, List<FieldPlan> fields) {}

    private record FieldPlan(FieldDescriptor field, Validate.FieldRules rules) {}

    private static final Map<Descriptor, Plan> PLANS = new ConcurrentHashMap<>();

    private static Plan plan(Descriptor d) {
        Plan p = PLANS.get(d);
        if (p != null) return p;
        boolean disabled =
                d.getOptions().getExtension(Validate.disabled) || d.getOptions().getExtension(Validate.ignored);
        List<OneofDescriptor> oneofs = new ArrayList<>();
        for (OneofDescriptor o : d.getRealOneofs()) {
            if (o.getOptions().getExtension(Validate.required)) oneofs.add(o);
        }
        List<FieldPlan> fields = new ArrayList<>();
        for (FieldDescriptor f : d.getFields()) {
            Validate.FieldRules rules =
                    f.getOptions().hasExtension(Validate.rules) ? f.getOptions().getExtension(Validate.rules) : null;
            if (rules != null || f.getJavaType() == FieldDescriptor.JavaType.MESSAGE) {
                fields.add(new FieldPlan(f, rules));
            }
        }
        p = new Plan(disabled, List.copyOf(oneofs), List.copyOf(fields));
        PLANS.put(d, p);
        return p;
    }

    private void message(Message m, FieldPath path, List<String> out) {
        Descriptor d = m.getDescriptorForType();
        Plan plan = plan(d);
        if (plan.disabled()) return;
        if (m instanceof Any any) {
            Message type = anyTypes.get(any.getTypeUrl());
            if (type == null) return;
            try {
                message(type.getParserForType().parseFrom(any.getValue()), path, out);
            } catch (InvalidProtocolBufferException e) {
                out.add(path + ": does not parse as " + any.getTypeUrl() + ": " + e.getMessage());
            }
            return;
        }
        for (OneofDescriptor o : plan.requiredOneofs()) {
            if (!m.hasOneof(o)) out.add(path + "." + o.getName() + ": one of its fields must be set");
        }
        for (FieldPlan fpl : plan.fields()) {
            FieldDescriptor f = fpl.field();
            Validate.FieldRules rules = fpl.rules();
            FieldPath fp = path.field(f.getName());
            if (f.isMapField()) {
                map(m, f, rules, fp, out);
            } else if (f.isRepeated()) {
                repeated(m, f, rules, fp, out);
            } else if (f.getRealContainingOneof() != null && !m.hasField(f)) {
                // the rules of a oneof's field hold when that field is the one set
                continue;
            } else if (f.getJavaType() == FieldDescriptor.JavaType.MESSAGE) {
                boolean set = m.hasField(f);
                if (rules != null && rules.getMessage().getRequired() && !set) out.add(fp + ": is required");
                if (!set) continue;
                Message value = (Message) m.getField(f);
                if (rules != null) messageValue(value, rules, fp, out);
                if (rules == null || !rules.getMessage().getSkip()) message(value, fp, out);
            } else if (rules != null) {
                scalar(f, m.getField(f), rules, fp, out);
            }
        }
    }

    private void repeated(Message m, FieldDescriptor f, Validate.FieldRules rules, FieldPath fp, List<String> out) {
        int n = m.getRepeatedFieldCount(f);
        Validate.FieldRules items = null;
        if (rules != null && rules.hasRepeated()) {
            Validate.RepeatedRules r = rules.getRepeated();
            if (!(r.getIgnoreEmpty() && n == 0)) {
                if (r.hasMinItems() && n < r.getMinItems())
                    out.add(fp + ": needs at least " + r.getMinItems() + " items, has " + n);
                if (r.hasMaxItems() && n > r.getMaxItems())
                    out.add(fp + ": takes at most " + r.getMaxItems() + " items, has " + n);
                if (r.getUnique()) {
                    Set<Object> seen = new HashSet<>();
                    for (int i = 0; i < n; i++) {
                        if (!seen.add(m.getRepeatedField(f, i))) out.add(fp.at(i) + ": repeats an earlier item");
                    }
                }
            }
            if (r.hasItems()) items = r.getItems();
        }
        for (int i = 0; i < n; i++) {
            Object v = m.getRepeatedField(f, i);
            FieldPath ip = fp.at(i);
            if (v instanceof Message msg) {
                if (items != null) messageValue(msg, items, ip, out);
                if (items == null || !items.getMessage().getSkip()) message(msg, ip, out);
            } else if (items != null) {
                scalar(f, v, items, ip, out);
            }
        }
    }

    private void map(Message m, FieldDescriptor f, Validate.FieldRules rules, FieldPath fp, List<String> out) {
        int n = m.getRepeatedFieldCount(f);
        Validate.MapRules r = rules != null && rules.hasMap() ? rules.getMap() : null;
        if (r != null && !(r.getIgnoreEmpty() && n == 0)) {
            if (r.hasMinPairs() && n < r.getMinPairs())
                out.add(fp + ": needs at least " + r.getMinPairs() + " entries, has " + n);
            if (r.hasMaxPairs() && n > r.getMaxPairs())
                out.add(fp + ": takes at most " + r.getMaxPairs() + " entries, has " + n);
        }
        FieldDescriptor keyField = f.getMessageType().findFieldByName("key");
        FieldDescriptor valueField = f.getMessageType().findFieldByName("value");
        for (int i = 0; i < n; i++) {
            Message entry = (Message) m.getRepeatedField(f, i);
            Object key = entry.getField(keyField);
            Object value = entry.getField(valueField);
            FieldPath ep = fp.key(key);
            if (r != null && r.hasKeys()) scalar(keyField, key, r.getKeys(), ep, out);
            if (value instanceof Message msg) {
                if (r != null && r.hasValues()) messageValue(msg, r.getValues(), ep, out);
                message(msg, ep, out);
            } else if (r != null && r.hasValues()) {
                scalar(valueField, value, r.getValues(), ep, out);
            }
        }
    }

    /** The rules of a message-typed field that apply to its value: wrappers, Duration, Any. */
    private void messageValue(Message value, Validate.FieldRules rules, FieldPath fp, List<String> out) {
        String type = value.getDescriptorForType().getFullName();
        if (type.startsWith("google.protobuf.") && type.endsWith("Value")) {
            FieldDescriptor inner = value.getDescriptorForType().findFieldByName("value");
            if (inner != null) scalar(inner, value.getField(inner), rules, fp, out);
        } else if (value instanceof Duration d && rules.hasDuration()) {
            duration(d, rules.getDuration(), fp, out);
        } else if (value instanceof Any any && rules.hasAny()) {
            Validate.AnyRules r = rules.getAny();
            if (!r.getInList().isEmpty() && !r.getInList().contains(any.getTypeUrl()))
                out.add(fp + ": type " + any.getTypeUrl() + " is not one of " + r.getInList());
            if (r.getNotInList().contains(any.getTypeUrl()))
                out.add(fp + ": type " + any.getTypeUrl() + " is not allowed");
        }
    }

    private static void duration(Duration d, Validate.DurationRules r, FieldPath fp, List<String> out) {
        BigDecimal v = seconds(d);
        if (r.hasConst() && v.compareTo(seconds(r.getConst())) != 0) out.add(fp + ": must be " + r.getConst());
        range(
                v,
                r.hasGt() ? seconds(r.getGt()) : null,
                r.hasGte() ? seconds(r.getGte()) : null,
                r.hasLt() ? seconds(r.getLt()) : null,
                r.hasLte() ? seconds(r.getLte()) : null,
                fp,
                out);
    }

    private static BigDecimal seconds(Duration d) {
        return BigDecimal.valueOf(d.getSeconds()).add(BigDecimal.valueOf(d.getNanos(), 9));
    }

    private static void scalar(
            FieldDescriptor f, Object value, Validate.FieldRules rules, FieldPath fp, List<String> out) {
        switch (rules.getTypeCase()) {
            case STRING -> string((String) value, rules.getString(), fp, out);
            case BYTES -> bytes((ByteString) value, rules.getBytes(), fp, out);
            case ENUM -> enumValue(f, value, rules.getEnum(), fp, out);
            case BOOL -> {
                if (rules.getBool().hasConst() && !value.equals(rules.getBool().getConst()))
                    out.add(fp + ": must be " + rules.getBool().getConst());
            }
            case FLOAT, DOUBLE, INT32, INT64, UINT32, UINT64, SINT32, SINT64, FIXED32, FIXED64, SFIXED32, SFIXED64 ->
                number(f, value, numericRules(rules), fp, out);
            default -> {
                // repeated, map, any, duration, timestamp: handled where the field's shape is known
            }
        }
    }

    private static Message numericRules(Validate.FieldRules rules) {
        FieldDescriptor which = rules.getDescriptorForType()
                .findFieldByNumber(rules.getTypeCase().getNumber());
        return (Message) rules.getField(which);
    }

    /** Numeric rules, read by field name (they are alike across the twelve numeric types). */
    private static void number(FieldDescriptor f, Object value, Message r, FieldPath fp, List<String> out) {
        BigDecimal v = decimal(f, value);
        Descriptor d = r.getDescriptorForType();
        if (bool(r, "ignore_empty") && v.signum() == 0) return;
        BigDecimal c = bound(f, r, d.findFieldByName("const"));
        if (c != null && v.compareTo(c) != 0) out.add(fp + ": must be " + c + ", is " + v);
        range(
                v,
                bound(f, r, d.findFieldByName("gt")),
                bound(f, r, d.findFieldByName("gte")),
                bound(f, r, d.findFieldByName("lt")),
                bound(f, r, d.findFieldByName("lte")),
                fp,
                out);
        List<?> in = (List<?>) r.getField(d.findFieldByName("in"));
        if (!in.isEmpty() && in.stream().noneMatch(x -> decimal(f, x).compareTo(v) == 0))
            out.add(fp + ": " + v + " is not one of " + in);
        List<?> notIn = (List<?>) r.getField(d.findFieldByName("not_in"));
        if (notIn.stream().anyMatch(x -> decimal(f, x).compareTo(v) == 0)) out.add(fp + ": " + v + " is not allowed");
    }

    private static BigDecimal bound(FieldDescriptor f, Message r, FieldDescriptor b) {
        return b != null && r.hasField(b) ? decimal(f, r.getField(b)) : null;
    }

    private static void range(
            BigDecimal v,
            BigDecimal gt,
            BigDecimal gte,
            BigDecimal lt,
            BigDecimal lte,
            FieldPath fp,
            List<String> out) {
        BigDecimal low = gt != null ? gt : gte;
        BigDecimal high = lt != null ? lt : lte;
        boolean aboveLow = low == null || (gt != null ? v.compareTo(gt) > 0 : v.compareTo(gte) >= 0);
        boolean belowHigh = high == null || (lt != null ? v.compareTo(lt) < 0 : v.compareTo(lte) <= 0);
        // PGV: a lower bound above the upper one means "outside the range"
        boolean ok =
                low != null && high != null && low.compareTo(high) > 0 ? aboveLow || belowHigh : aboveLow && belowHigh;
        if (!ok) {
            out.add(fp + ": " + v + " is out of range (" + (gt != null ? "> " + gt : gte != null ? ">= " + gte : "")
                    + (low != null && high != null ? ", " : "")
                    + (lt != null ? "< " + lt : lte != null ? "<= " + lte : "") + ")");
        }
    }

    private static BigDecimal decimal(FieldDescriptor f, Object value) {
        FieldDescriptor.Type t = f.getType();
        if (value instanceof Integer i && (t == FieldDescriptor.Type.UINT32 || t == FieldDescriptor.Type.FIXED32))
            return BigDecimal.valueOf(Integer.toUnsignedLong(i));
        if (value instanceof Long l && (t == FieldDescriptor.Type.UINT64 || t == FieldDescriptor.Type.FIXED64))
            return new BigDecimal(new BigInteger(Long.toUnsignedString(l)));
        if (value instanceof Float x) return BigDecimal.valueOf(x);
        if (value instanceof Double x) return BigDecimal.valueOf(x);
        return BigDecimal.valueOf(((Number) value).longValue());
    }

    private static boolean bool(Message r, String field) {
        FieldDescriptor fd = r.getDescriptorForType().findFieldByName(field);
        return fd != null && Boolean.TRUE.equals(r.getField(fd));
    }

    private static void enumValue(
            FieldDescriptor f, Object value, Validate.EnumRules r, FieldPath fp, List<String> out) {
        int n = value instanceof EnumValueDescriptor e ? e.getNumber() : ((Number) value).intValue();
        if (r.getDefinedOnly() && f.getEnumType().findValueByNumber(n) == null)
            out.add(fp + ": " + n + " is not a value of " + f.getEnumType().getName());
        if (r.hasConst() && n != r.getConst()) out.add(fp + ": must be " + r.getConst());
        if (!r.getInList().isEmpty() && !r.getInList().contains(n)) out.add(fp + ": " + n + " is not allowed");
        if (r.getNotInList().contains(n)) out.add(fp + ": " + n + " is not allowed");
    }

    private static void string(String s, Validate.StringRules r, FieldPath fp, List<String> out) {
        if (r.getIgnoreEmpty() && s.isEmpty()) return;
        boolean charRules = r.hasLen() || r.hasMinLen() || r.hasMaxLen();
        boolean byteRules = r.hasLenBytes() || r.hasMinBytes() || r.hasMaxBytes();
        long chars = charRules ? s.codePointCount(0, s.length()) : 0;
        long bytes = byteRules ? s.getBytes(StandardCharsets.UTF_8).length : 0;
        if (r.hasConst() && !s.equals(r.getConst())) out.add(fp + ": must be '" + r.getConst() + "'");
        if (r.hasLen() && chars != r.getLen()) out.add(fp + ": must be " + r.getLen() + " characters long");
        if (r.hasMinLen() && chars < r.getMinLen())
            out.add(fp + ": " + shown(s) + " is shorter than " + r.getMinLen() + " characters");
        if (r.hasMaxLen() && chars > r.getMaxLen())
            out.add(fp + ": " + shown(s) + " is longer than " + r.getMaxLen() + " characters");
        if (r.hasLenBytes() && bytes != r.getLenBytes()) out.add(fp + ": must be " + r.getLenBytes() + " bytes");
        if (r.hasMinBytes() && bytes < r.getMinBytes()) out.add(fp + ": is shorter than " + r.getMinBytes() + " bytes");
        if (r.hasMaxBytes() && bytes > r.getMaxBytes()) out.add(fp + ": is longer than " + r.getMaxBytes() + " bytes");
        if (r.hasPattern() && !pattern(r.getPattern()).matcher(s).find())
            out.add(fp + ": " + shown(s) + " does not match " + r.getPattern());
        if (r.hasPrefix() && !s.startsWith(r.getPrefix())) out.add(fp + ": must start with " + r.getPrefix());
        if (r.hasSuffix() && !s.endsWith(r.getSuffix())) out.add(fp + ": must end with " + r.getSuffix());
        if (r.hasContains() && !s.contains(r.getContains())) out.add(fp + ": must contain " + r.getContains());
        if (r.hasNotContains() && s.contains(r.getNotContains()))
            out.add(fp + ": must not contain " + r.getNotContains());
        if (!r.getInList().isEmpty() && !r.getInList().contains(s))
            out.add(fp + ": " + shown(s) + " is not one of " + r.getInList());
        if (r.getNotInList().contains(s)) out.add(fp + ": " + shown(s) + " is not allowed");
        switch (r.getWellKnownCase()) {
            case HOSTNAME -> {
                if (r.getHostname() && !HOSTNAME.matcher(s).matches())
                    out.add(fp + ": " + shown(s) + " is no hostname");
            }
            case IP -> {
                if (r.getIp() && !IpAddresses.isBare(s)) out.add(fp + ": " + shown(s) + " is no IP address");
            }
            case IPV4 -> {
                if (r.getIpv4() && !(IpAddresses.isBare(s) && !s.contains(":")))
                    out.add(fp + ": " + shown(s) + " is no IPv4 address");
            }
            case IPV6 -> {
                if (r.getIpv6() && !(IpAddresses.isBare(s) && s.contains(":")))
                    out.add(fp + ": " + shown(s) + " is no IPv6 address");
            }
            case ADDRESS -> {
                if (r.getAddress()
                        && !IpAddresses.isBare(s)
                        && !HOSTNAME.matcher(s).matches())
                    out.add(fp + ": " + shown(s) + " is neither a hostname nor an IP address");
            }
            case WELL_KNOWN_REGEX -> {
                boolean strict = !r.hasStrict() || r.getStrict();
                Pattern p = switch (r.getWellKnownRegex()) {
                    case HTTP_HEADER_NAME -> strict ? HEADER_NAME_STRICT : HEADER_LOOSE;
                    case HTTP_HEADER_VALUE -> strict ? HEADER_VALUE_STRICT : HEADER_LOOSE;
                    default -> null;
                };
                if (p != null && !p.matcher(s).matches())
                    out.add(fp + ": " + shown(s) + " is not a valid " + r.getWellKnownRegex());
            }
            default -> {
                // e-mail, URI, UUID: not used by the resources the bridge makes
            }
        }
    }

    /** A string as a problem shows it: quoted, cut at 60 characters (substring shares nothing costly here). */
    private static String shown(String s) {
        return s.length() > 60 ? "'" + s.substring(0, 60) + "...'" : "'" + s + "'";
    }

    private static void bytes(ByteString b, Validate.BytesRules r, FieldPath fp, List<String> out) {
        if (r.getIgnoreEmpty() && b.isEmpty()) return;
        if (r.hasLen() && b.size() != r.getLen()) out.add(fp + ": must be " + r.getLen() + " bytes");
        if (r.hasMinLen() && b.size() < r.getMinLen()) out.add(fp + ": is shorter than " + r.getMinLen() + " bytes");
        if (r.hasMaxLen() && b.size() > r.getMaxLen()) out.add(fp + ": is longer than " + r.getMaxLen() + " bytes");
    }

    private static Pattern pattern(String re2) {
        return PATTERNS.computeIfAbsent(re2, Pattern::compile);
    }
}
