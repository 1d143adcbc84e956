package dev.meshbridge.ads;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.BitSet;
import org.junit.jupiter.api.Test;

/** The per-resource subscriber sets that let a change visit only the streams subscribed to it. */
class SubscribersTest {

    private final TypeIndex eds = new TypeIndex(ResourceType.of("eds", "test/eds", false));

    private TypeState stream(long id) {
        return AdsStream.sotw(id, null, "peer-" + id, Instant.EPOCH, 1, null).stateOrCreate(0, eds, "test/eds");
    }

    @Test
    void namedSubscriptions_areFoundByResource_andLeaveWhenUnsubscribed() {
        int shop = eds.id("outbound|80||shop.demo");
        int orders = eds.id("outbound|80||orders.demo");
        TypeState a = stream(1);
        TypeState b = stream(2);

        a.name(shop, true);
        a.name(orders, true);
        b.name(orders, true);

        assertThat(eds.subscribers.naming(shop)).containsExactly(a);
        assertThat(eds.subscribers.naming(orders)).containsExactly(a, b);
        a.name(orders, false);
        assertThat(eds.subscribers.naming(orders)).containsExactly(b);
        assertThat(eds.subscribers.naming(eds.id("never-subscribed"))).isEmpty();
    }

    @Test
    void replacingTheNames_movesTheSubscriptionAcrossResources() {
        int shop = eds.id("shop");
        int orders = eds.id("orders");
        int users = eds.id("users");
        TypeState a = stream(1);
        BitSet first = new BitSet();
        first.set(shop);
        first.set(orders);
        a.names(first);

        BitSet second = new BitSet();
        second.set(orders);
        second.set(users);
        a.names(second);

        assertThat(eds.subscribers.naming(shop)).isEmpty();
        assertThat(eds.subscribers.naming(orders)).containsExactly(a);
        assertThat(eds.subscribers.naming(users)).containsExactly(a);
        assertThat(a.names).isEqualTo(second);
    }

    @Test
    void aClosedStream_leavesNothingBehind() {
        int shop = eds.id("shop");
        TypeState a = stream(1);
        TypeState b = stream(2);
        a.wildcard(true);
        a.name(shop, true);
        b.name(shop, true);

        a.unsubscribeAll();

        assertThat(eds.subscribers.wildcard(0)).isEmpty();
        assertThat(eds.subscribers.naming(shop)).containsExactly(b);
        assertThat(eds.subscribers.namedCount()).isEqualTo(1);
        assertThat(a.wildcard).isFalse();
        assertThat(a.names.isEmpty()).isTrue();
    }
}
