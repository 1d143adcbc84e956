package dev.meshbridge.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;

/** What the figures were measured on: cores, memory, JDK, the load average, the date. */
record Machine(
        int cores,
        String cpuModel,
        long memoryBytes,
        String jdk,
        String os,
        String loadAverage,
        String date,
        List<String> jvmArgs) {

    static Machine capture() {
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        return new Machine(
                Runtime.getRuntime().availableProcessors(),
                readCpuModel(),
                os.getTotalMemorySize(),
                System.getProperty("java.vm.vendor") + " " + System.getProperty("java.vm.name") + " "
                        + System.getProperty("java.runtime.version"),
                System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                        + System.getProperty("os.arch"),
                currentLoadAverage(),
                ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME),
                ManagementFactory.getRuntimeMXBean().getInputArguments());
    }

    /** The 1, 5 and 15 minute load averages ({@code /proc/loadavg}), or the JVM's 1-minute figure elsewhere. */
    static String currentLoadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException | RuntimeException e) {
            return String.format(
                    Locale.ROOT,
                    "%.2f",
                    ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        }
    }

    /**
     * The machine's CPU time so far from {@code /proc/stat}: {@code [busy, total]} in clock ticks over every core
     * (busy: everything but idle and iowait), or {@code [0, 0]} elsewhere. Two readings give the share of the whole
     * machine that was busy in between, whoever used it.
     */
    static long[] cpuTicks() {
        try {
            String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
            long total = 0;
            for (int i = 1; i < f.length; i++) total += Long.parseLong(f[i]);
            long idle = Long.parseLong(f[4]) + (f.length > 5 ? Long.parseLong(f[5]) : 0);
            return new long[] {total - idle, total};
        } catch (IOException | RuntimeException e) {
            return new long[] {0, 0};
        }
    }

    /** This JVM's garbage collections so far: {@code [count, milliseconds]} over every collector. */
    static long[] gc() {
        long count = 0;
        long millis = 0;
        for (var b : ManagementFactory.getGarbageCollectorMXBeans()) {
            count += Math.max(0, b.getCollectionCount());
            millis += Math.max(0, b.getCollectionTime());
        }
        return new long[] {count, millis};
    }

    /** Clock ticks per second of {@code /proc/stat} (USER_HZ, 100 on Linux). */
    static final int TICKS_PER_SECOND = 100;

    private static String readCpuModel() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name"))
                    return line.substring(line.indexOf(':') + 1).trim();
            }
        } catch (IOException | RuntimeException e) {
            // not Linux
        }
        return System.getProperty("os.arch");
    }

    /** Resident set size of this process, bytes ({@code VmRSS}), or -1. */
    static long rss() {
        return rss(ProcessHandle.current().pid());
    }

    static long rss(long pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux
        }
        return -1;
    }
}
