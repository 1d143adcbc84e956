package dev.meshbridge.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meshbridge.bench.load.SyntheticCatalog;
import dev.meshbridge.core.model.MeshSnapshot;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@link Target#whenCarried}, the callback the many-streams window's bridge-side figure waits on instead of polling: the
 * real aggregator and the bridge's real xDS and MCP servers, changes sent through the SPI as the bench sends them.
 * Every wait is on a future with a generous bound; nothing is timed.
 */
class TargetWhenCarriedTest {

    private static final long BOUND_SECONDS = 60;

    @Test
    void aWatchRunsOnceWithTheFirstSnapshotCarryingItsChange_andNotForAnEarlierOne() throws Exception {
        SyntheticCatalog catalog = new SyntheticCatalog(3, 2);
        String host = catalog.host(catalog.probe());
        AtomicInteger ids = new AtomicInteger(1);
        try (BridgeTarget target = new BridgeTarget()) {
            SpiDriver driver = new SpiDriver(catalog, target.aggregator(), null, ids::getAndIncrement, 7);
            List<MeshSnapshot> second = new CopyOnWriteArrayList<>();
            CompletableFuture<MeshSnapshot> first = new CompletableFuture<>();
            target.whenCarried(host, 1, first::complete);
            target.whenCarried(host, 2, second::add);

            int id = driver.change(catalog.probe());
            assertThat(id).isEqualTo(1);
            MeshSnapshot carrying = first.get(BOUND_SECONDS, TimeUnit.SECONDS);
            assertThat(Target.carries(carrying, host, 1)).isTrue();
            // the published snapshot is the one the servers were handed: after it, nothing waits for change 2 yet
            target.settle(TimeUnit.SECONDS.toMillis(BOUND_SECONDS));
            assertThat(second).isEmpty();

            assertThat(driver.change(catalog.probe())).isEqualTo(2);
            target.settle(TimeUnit.SECONDS.toMillis(BOUND_SECONDS));
            assertThat(second)
                    .singleElement()
                    .satisfies(s -> assertThat(Target.carries(s, host, 2)).isTrue());
            // a later change does not run it again
            driver.change(catalog.probe());
            target.settle(TimeUnit.SECONDS.toMillis(BOUND_SECONDS));
            assertThat(second).hasSize(1);
        }
    }

    @Test
    void aWatchForAChangeAlreadyPublished_runsAtOnce_andTheXdsServerHasAppliedItOnceIdle() throws Exception {
        SyntheticCatalog catalog = new SyntheticCatalog(3, 2);
        String host = catalog.host(catalog.probe());
        AtomicInteger ids = new AtomicInteger(1);
        try (BridgeTarget target = new BridgeTarget()) {
            // the catalog first, as the bench ingests it: a change then changes a service the servers already serve
            // (a snapshot that only adds services may have its sidecar resources, so its served sequence, put off)
            for (int i = 0; i < catalog.services(); i++) target.aggregator().accept(catalog.upsert(i));
            target.settle(TimeUnit.SECONDS.toMillis(BOUND_SECONDS));
            SpiDriver driver = new SpiDriver(catalog, target.aggregator(), null, ids::getAndIncrement, 7);
            driver.change(catalog.probe());
            MeshSnapshot published = target.aggregator().flushNow().get(BOUND_SECONDS, TimeUnit.SECONDS);

            Thread caller = Thread.currentThread();
            CompletableFuture<MeshSnapshot> ran = new CompletableFuture<>();
            target.whenCarried(host, 1, s -> {
                if (Thread.currentThread() == caller) ran.complete(s);
                else ran.completeExceptionally(new AssertionError("ran on " + Thread.currentThread()));
            });
            assertThat(ran).isCompleted();
            MeshSnapshot s = ran.get();
            assertThat(s.sequence()).isGreaterThanOrEqualTo(published.sequence());

            // what the bench does next: the xDS server's idle() queued behind the application of that snapshot
            target.xdsIdle().get(BOUND_SECONDS, TimeUnit.SECONDS);
            assertThat(target.xdsServed().getAsLong()).isGreaterThanOrEqualTo(s.sequence());
        }
    }
}
