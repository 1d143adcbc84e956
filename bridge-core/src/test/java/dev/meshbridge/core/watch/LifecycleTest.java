package dev.meshbridge.core.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class LifecycleTest {

    @Test
    void startsOnce_closesOnce_andCannotStartAfterClose() {
        Lifecycle l = new Lifecycle("watcher x");
        assertThat(l.state()).isEqualTo(Lifecycle.State.LATENT);
        l.start();
        assertThat(l.isStarted()).isTrue();
        assertThatThrownBy(l::start).hasMessageContaining("watcher x was already started or closed");
        assertThat(l.close()).isTrue();
        assertThat(l.close()).isFalse();
        assertThat(l.isClosed()).isTrue();
        Lifecycle never = new Lifecycle("y");
        assertThat(never.close()).isTrue();
        assertThatThrownBy(never::start).isInstanceOf(IllegalStateException.class);
    }
}
