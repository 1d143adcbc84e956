package dev.meshbridge.app;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What a Kubernetes Service does for the bridge's replicas, on 127.0.0.1: each new TCP connection goes to the next
 * replica, round robin, among those whose {@code /ready} answered 200 at the last probe (every 100 ms, as a readiness
 * probe and the endpoints controller do, only faster). Open connections stay where they are, as with kube-proxy.
 */
final class ServiceBalancer implements AutoCloseable {

    /** One replica behind the Service: the port traffic goes to, and its admin port for {@code /ready}. */
    record Replica(String name, int port, int adminPort) {}

    private final List<Replica> replicas = new CopyOnWriteArrayList<>();
    private final List<Replica> ready = new CopyOnWriteArrayList<>();
    private final AtomicInteger next = new AtomicInteger();
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
    private final java.util.concurrent.ScheduledExecutorService prober =
            java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "service-balancer-probe");
                t.setDaemon(true);
                return t;
            });
    private final TcpProxy proxy;

    ServiceBalancer(List<Replica> initial) throws IOException {
        replicas.addAll(initial);
        probe();
        proxy = new TcpProxy(this::pick);
        prober.scheduleWithFixedDelay(this::probe, 100, 100, java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    int port() {
        return proxy.port();
    }

    /** A replica joins the Service (a scale-up); it gets connections once it is ready. */
    void add(Replica r) {
        replicas.add(r);
    }

    /** The replicas that answered ready at the last probe. */
    List<String> readyNames() {
        return ready.stream().map(Replica::name).toList();
    }

    private void probe() {
        for (Replica r : replicas) {
            boolean ok = readyNow(r);
            if (ok && !ready.contains(r)) ready.add(r);
            if (!ok) ready.remove(r);
        }
    }

    private boolean readyNow(Replica r) {
        try {
            HttpResponse<Void> response = http.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + r.adminPort() + "/ready"))
                            .timeout(Duration.ofSeconds(1))
                            .build(),
                    HttpResponse.BodyHandlers.discarding());
            return response.statusCode() == 200;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private int pick() {
        List<Replica> now = List.copyOf(ready);
        if (now.isEmpty()) return -1;
        return now.get(Math.floorMod(next.getAndIncrement(), now.size())).port();
    }

    @Override
    public void close() throws IOException {
        prober.shutdownNow();
        proxy.close();
    }
}
