package dev.meshbridge.core.watch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meshbridge.core.model.Endpoint;
import dev.meshbridge.core.model.Health;
import java.util.List;
import org.junit.jupiter.api.Test;

class DuplicatesTest {

    private static Endpoint ep(String address, Health health, boolean enabled, int weight) {
        return Endpoint.builder(address)
                .port("http", 8080)
                .health(health)
                .enabled(enabled)
                .weight(weight)
                .build();
    }

    @Test
    void aHealthyEnabledCopy_beatsANewerCriticalOrDisabledOne() {
        Endpoint good = ep("10.0.0.1", Health.HEALTHY, true, 100);
        Endpoint critical = ep("10.0.0.1", Health.UNHEALTHY, true, 100);
        Endpoint disabled = ep("10.0.0.1", Health.HEALTHY, false, 100);
        Endpoint weightless = ep("10.0.0.1", Health.HEALTHY, true, 0);
        Duplicates.Result r = Duplicates.pick(List.of(
                new Duplicates.Candidate(critical, 300, "a"),
                new Duplicates.Candidate(good, 100, "b"),
                new Duplicates.Candidate(disabled, 400, "c"),
                new Duplicates.Candidate(weightless, 500, "d")));
        assertThat(r.endpoints()).containsExactly(good);
        assertThat(r.dropped()).extracting(d -> d.dropped().id()).containsExactlyInAnyOrder("a", "c", "d");
    }

    @Test
    void amongEquals_theNewestWins_thenTheFirstId_whateverTheOrder() {
        Endpoint old = ep("10.0.0.1", Health.HEALTHY, true, 100);
        Endpoint fresh = ep("10.0.0.1", Health.HEALTHY, true, 50);
        List<Duplicates.Candidate> forward =
                List.of(new Duplicates.Candidate(old, 1, "x"), new Duplicates.Candidate(fresh, 2, "y"));
        assertThat(Duplicates.pick(forward).endpoints()).containsExactly(fresh);
        assertThat(Duplicates.pick(forward.reversed()).endpoints()).containsExactly(fresh);
        List<Duplicates.Candidate> tie =
                List.of(new Duplicates.Candidate(fresh, 1, "b"), new Duplicates.Candidate(old, 1, "a"));
        assertThat(Duplicates.pick(tie).endpoints()).containsExactly(old);
        assertThat(Duplicates.pick(tie.reversed()).endpoints()).containsExactly(old);
    }

    @Test
    void differentPorts_areDifferentEndpoints_andTheResultIsSorted() {
        Endpoint b = Endpoint.builder("10.0.0.2").port("http", 80).build();
        Endpoint a1 = Endpoint.builder("10.0.0.1").port("http", 80).build();
        Endpoint a2 = Endpoint.builder("10.0.0.1").port("http", 81).build();
        Duplicates.Result r = Duplicates.pick(List.of(
                new Duplicates.Candidate(b, 0, "1"),
                new Duplicates.Candidate(a2, 0, "2"),
                new Duplicates.Candidate(a1, 0, "3")));
        assertThat(r.endpoints()).containsExactly(a1, a2, b);
        assertThat(r.dropped()).isEmpty();
    }
}
