package dev.meshbridge.bench;

import dev.meshbridge.bench.world.WorldMain;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The handle on the load process ({@link WorldMain}), a child JVM started with this JVM's class path: one command per
 * line, one answer per line. Its log goes to {@code world.log} in the work directory.
 */
final class World implements AutoCloseable {

    private final Process process;
    private final BufferedWriter in;
    private final LinkedBlockingQueue<String> answers = new LinkedBlockingQueue<>();
    private final List<String> jvmArgs;

    World(Path work, String heap) throws IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> cmd = new ArrayList<>();
        cmd.add(java);
        cmd.add("-Xms" + heap);
        cmd.add("-Xmx" + heap);
        cmd.add("-XX:+UseG1GC");
        cmd.add("-Duser.home=" + work.resolve("home"));
        cmd.add("-Djava.io.tmpdir=" + work.resolve("tmp"));
        cmd.add("-Ddubbo.application.qos-enable=false");
        cmd.add("-Ddubbo.application.logger=slf4j");
        cmd.add("-Ddubbo.json-framework.prefer=fastjson2");
        cmd.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");
        cmd.add("-Dorg.slf4j.simpleLogger.log.dev.meshbridge=warn");
        if (System.getProperty("bench.debug") != null) cmd.add("-Dbench.debug=true");
        if (Boolean.getBoolean("bench.worldJfr")) {
            cmd.add("-XX:+UnlockDiagnosticVMOptions");
            cmd.add("-XX:+DebugNonSafepoints");
        }
        if (Runtime.version().feature() >= 24) cmd.add("--sun-misc-unsafe-memory-access=allow");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(WorldMain.class.getName());
        jvmArgs = List.copyOf(cmd.subList(1, cmd.size() - 3));
        work.resolve("tmp").toFile().mkdirs();
        ProcessBuilder pb = new ProcessBuilder(cmd)
                .redirectError(ProcessBuilder.Redirect.appendTo(
                        work.resolve("world.log").toFile()));
        process = pb.start();
        in = new BufferedWriter(new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8));
        Thread reader = new Thread(
                () -> {
                    try (BufferedReader r = new BufferedReader(
                            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                        String line;
                        while ((line = r.readLine()) != null) answers.add(line);
                    } catch (IOException e) {
                        answers.add("err " + e);
                    }
                    answers.add("err the load process ended");
                },
                "bench-world-reader");
        reader.setDaemon(true);
        reader.start();
    }

    List<String> jvmArgs() {
        return jvmArgs;
    }

    /** Sends a command and waits for its answer; fails on {@code err} or when none comes in time. */
    Map<String, String> call(long timeoutMillis, Object... words) throws IOException {
        synchronized (answers) {
            return callLocked(timeoutMillis, words);
        }
    }

    private Map<String, String> callLocked(long timeoutMillis, Object... words) throws IOException {
        send(words);
        String answer;
        try {
            answer = answers.poll(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
        if (answer == null) throw new IOException("no answer from the load process to " + words[0]);
        if (!answer.startsWith("ok")) throw new IOException("load process: " + answer);
        Map<String, String> out = new LinkedHashMap<>();
        for (String kv : answer.substring(2).trim().split(" ")) {
            int eq = kv.indexOf('=');
            if (eq > 0) out.put(kv.substring(0, eq), kv.substring(eq + 1));
        }
        return out;
    }

    /** Tells the load process when a change entered the bridge (no answer). */
    void t0(int id, long nanos, int service) throws IOException {
        send("t0", id, nanos, service);
    }

    /** Gives a change of the current window another start time (no answer), for a report from another stage. */
    void retime(int id, long nanos) throws IOException {
        send("retime", id, nanos);
    }

    private void send(Object... words) throws IOException {
        StringBuilder b = new StringBuilder();
        for (Object w : words) {
            if (b.length() > 0) b.append(' ');
            b.append(w);
        }
        synchronized (in) {
            in.write(b.append('\n').toString());
            in.flush();
        }
    }

    @Override
    public void close() {
        try {
            send("exit");
        } catch (IOException ignored) {
            // gone already
        }
        try {
            if (!process.waitFor(20, TimeUnit.SECONDS)) process.destroyForcibly();
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
