package dev.meshbridge.bench;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A diagnostic next to {@link HeapProbe}: reads a heap dump ({@code jcmd <pid> GC.heap_dump -all=false FILE}, HPROF
 * format, one file under 2 GB) and says who holds the bytes. Each object is charged to its first referrer in the dump,
 * followed up to the nearest object of a {@code dev.meshbridge} class (at most 12 steps), and the shallow bytes are
 * summed by that owner, the field it is reached through and the object's class: {@code byte[] <= xds.XdsResource.body}
 * are the bytes of served xDS resources, whoever else refers to them. An object referred to from several places is
 * charged once, to the first referrer the dump lists, so a shared string shows under one of its holders. Sizes assume
 * compressed pointers and class pointers (12-byte headers, 4-byte references, 8-byte alignment), as a heap under 32 GB
 * has. Usage: {@code HeapOwners <dump.hprof> [rows]}.
 */
public final class HeapOwners {

    private static final String OWN = "dev.meshbridge.";

    private final MappedByteBuffer in;
    private int idSize;
    private final Map<Long, String> strings = new HashMap<>();
    private final Map<Long, Long> classNameIds = new HashMap<>();
    private final Map<Long, Long> superclasses = new HashMap<>();
    private final Map<Long, byte[]> fieldTypes = new HashMap<>();
    private final Map<Long, long[]> fieldNames = new HashMap<>();
    private final Map<Long, Integer> classIndex = new HashMap<>();
    private final List<String> classNames = new ArrayList<>();
    private final Map<String, Integer> fieldIndex = new HashMap<>();
    private final List<String> fields = new ArrayList<>();

    private long[] ids = new long[1 << 16];
    private int[] classes = new int[1 << 16];
    private int[] sizes = new int[1 << 16];
    private int objects;

    private long[] refTo = new long[1 << 16];
    private int[] refFrom = new int[1 << 16];
    private int[] refField = new int[1 << 16];
    private int refs;

    private HeapOwners(MappedByteBuffer in) {
        this.in = in;
    }

    public static void main(String[] args) throws IOException {
        int rows = args.length > 1 ? Integer.parseInt(args[1]) : 60;
        try (RandomAccessFile f = new RandomAccessFile(args[0], "r");
                FileChannel ch = f.getChannel()) {
            HeapOwners h = new HeapOwners(ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size()));
            h.read();
            h.print(rows);
        }
    }

    private void read() {
        while (in.get() != 0) {} // "JAVA PROFILE 1.0.x"
        idSize = in.getInt();
        in.getLong();
        List<int[]> segments = new ArrayList<>();
        while (in.hasRemaining()) {
            int tag = in.get() & 0xff;
            in.getInt();
            int length = in.getInt();
            int start = in.position();
            if (tag == 0x01) {
                long id = id();
                byte[] s = new byte[length - idSize];
                in.get(s);
                strings.put(id, new String(s, StandardCharsets.UTF_8));
            } else if (tag == 0x02) {
                in.getInt();
                long classId = id();
                in.getInt();
                classNameIds.put(classId, id());
            } else if (tag == 0x0c || tag == 0x1c) {
                segments.add(new int[] {start, length});
            }
            in.position(start + length);
        }
        for (int[] s : segments) segment(s[0], s[1], true);
        for (int[] s : segments) segment(s[0], s[1], false);
    }

    private long id() {
        return idSize == 8 ? in.getLong() : in.getInt() & 0xffffffffL;
    }

    private long idAt(int at) {
        return idSize == 8 ? in.getLong(at) : in.getInt(at) & 0xffffffffL;
    }

    /** Bytes of a value of this basic type in the dump. */
    private int dumped(int type) {
        return switch (type) {
            case 2 -> idSize;
            case 4, 8 -> 1;
            case 5, 9 -> 2;
            case 6, 10 -> 4;
            case 7, 11 -> 8;
            default -> throw new IllegalStateException("basic type " + type);
        };
    }

    /** Bytes of a value of this basic type in the heap (compressed references). */
    private int inHeap(int type) {
        return type == 2 ? 4 : dumped(type);
    }

    private static int align(long bytes) {
        return (int) ((bytes + 7) & ~7L);
    }

    private int classOf(long classId) {
        return classIndex.computeIfAbsent(classId, k -> {
            Long name = classNameIds.get(k);
            classNames.add(name == null ? "?" : strings.get(name).replace('/', '.'));
            return classNames.size() - 1;
        });
    }

    private int field(String name) {
        return fieldIndex.computeIfAbsent(name, k -> {
            fields.add(k);
            return fields.size() - 1;
        });
    }

    private void object(long id, int cls, int size) {
        if (objects == ids.length) {
            ids = Arrays.copyOf(ids, objects * 2);
            classes = Arrays.copyOf(classes, objects * 2);
            sizes = Arrays.copyOf(sizes, objects * 2);
        }
        ids[objects] = id;
        classes[objects] = cls;
        sizes[objects++] = size;
    }

    private void reference(int from, long to, int field) {
        if (to == 0) return;
        if (refs == refTo.length) {
            refTo = Arrays.copyOf(refTo, refs * 2);
            refFrom = Arrays.copyOf(refFrom, refs * 2);
            refField = Arrays.copyOf(refField, refs * 2);
        }
        refTo[refs] = to;
        refFrom[refs] = from;
        refField[refs++] = field;
    }

    private void skip(int bytes) {
        in.position(in.position() + bytes);
    }

    /** One heap dump segment: the class dumps in the first pass, the objects in the second. */
    private void segment(int start, int length, boolean classPass) {
        in.position(start);
        while (in.position() < start + length) {
            int sub = in.get() & 0xff;
            switch (sub) {
                case 0xff, 0x05, 0x07 -> id(); // unknown root, sticky class, monitor used
                case 0x01 -> skip(2 * idSize); // JNI global
                case 0x02, 0x03, 0x08 -> skip(idSize + 8); // JNI local, Java frame, thread object
                case 0x04, 0x06 -> skip(idSize + 4); // native stack, thread block
                case 0x20 -> classDump(classPass);
                case 0x21 -> instance(classPass);
                case 0x22 -> objectArray(classPass);
                case 0x23 -> primitiveArray(classPass);
                default -> throw new IllegalStateException("heap dump record " + sub + " at " + in.position());
            }
        }
    }

    private void classDump(boolean classPass) {
        long classId = id();
        in.getInt();
        long superclass = id();
        skip(5 * idSize + 4);
        int constants = in.getShort() & 0xffff;
        for (int i = 0; i < constants; i++) {
            in.getShort();
            skip(dumped(in.get()));
        }
        int statics = in.getShort() & 0xffff;
        for (int i = 0; i < statics; i++) {
            id();
            skip(dumped(in.get()));
        }
        int count = in.getShort() & 0xffff;
        byte[] types = new byte[count];
        long[] names = new long[count];
        for (int i = 0; i < count; i++) {
            names[i] = id();
            types[i] = in.get();
        }
        if (classPass) {
            superclasses.put(classId, superclass);
            fieldTypes.put(classId, types);
            fieldNames.put(classId, names);
        }
    }

    private void instance(boolean classPass) {
        long id = id();
        in.getInt();
        long classId = id();
        int length = in.getInt();
        int at = in.position();
        if (!classPass) {
            int me = objects;
            object(id, classOf(classId), 0);
            long size = 12;
            for (long c = classId; c != 0 && fieldTypes.containsKey(c); c = superclasses.get(c)) {
                byte[] types = fieldTypes.get(c);
                long[] names = fieldNames.get(c);
                for (int i = 0; i < types.length; i++) {
                    size += inHeap(types[i]);
                    if (types[i] == 2) reference(me, idAt(at), field(strings.getOrDefault(names[i], "?")));
                    at += dumped(types[i]);
                }
            }
            sizes[me] = align(size);
        }
        in.position(in.position() + length);
    }

    private void objectArray(boolean classPass) {
        long id = id();
        in.getInt();
        int length = in.getInt();
        long classId = id();
        if (classPass) {
            skip(length * idSize);
            return;
        }
        int me = objects;
        object(id, classOf(classId), align(16 + 4L * length));
        int f = field("[]");
        for (int i = 0; i < length; i++) reference(me, id(), f);
    }

    private void primitiveArray(boolean classPass) {
        long id = id();
        in.getInt();
        int length = in.getInt();
        int type = in.get();
        if (!classPass) {
            String name = switch (type) {
                case 4 -> "boolean[]";
                case 5 -> "char[]";
                case 6 -> "float[]";
                case 7 -> "double[]";
                case 8 -> "byte[]";
                case 9 -> "short[]";
                case 10 -> "int[]";
                default -> "long[]";
            };
            int cls = classIndex.computeIfAbsent(-1000L - type, k -> {
                classNames.add(name);
                return classNames.size() - 1;
            });
            object(id, cls, align(16 + (long) dumped(type) * length));
        }
        skip(length * dumped(type));
    }

    private static String brief(String className) {
        return className
                .replace(OWN, "")
                .replace("com.google.protobuf.", "pb.")
                .replace("java.util.", "")
                .replace("java.lang.", "");
    }

    private void print(int rows) {
        Map<Long, Integer> index = new HashMap<>(objects * 2);
        for (int i = 0; i < objects; i++) index.put(ids[i], i);
        int[] parent = new int[objects];
        int[] parentField = new int[objects];
        Arrays.fill(parent, -1);
        for (int r = 0; r < refs; r++) {
            Integer to = index.get(refTo[r]);
            if (to != null && parent[to] == -1 && refFrom[r] != to) {
                parent[to] = refFrom[r];
                parentField[to] = refField[r];
            }
        }
        Map<String, long[]> byOwner = new HashMap<>();
        long total = 0;
        for (int i = 0; i < objects; i++) {
            String cls = classNames.get(classes[i]);
            total += sizes[i];
            if (cls.equals("java.lang.Class")) continue;
            int p = i;
            String via = "";
            for (int hops = 0; parent[p] != -1 && hops < 12; hops++) {
                via = fields.get(parentField[p]);
                p = parent[p];
                if (classNames.get(classes[p]).startsWith(OWN)) break;
            }
            String key = brief(cls) + " <= " + brief(classNames.get(classes[p])) + (p == i ? "" : "." + via);
            long[] v = byOwner.computeIfAbsent(key, k -> new long[2]);
            v[0]++;
            v[1] += sizes[i];
        }
        System.out.printf("%,d bytes in %,d objects (shallow, classes left out)%n", total, objects);
        byOwner.entrySet().stream()
                .sorted((a, b) -> Long.compare(b.getValue()[1], a.getValue()[1]))
                .limit(rows)
                .forEach(e -> System.out.printf("%,12d %,9d  %s%n", e.getValue()[1], e.getValue()[0], e.getKey()));
    }
}
