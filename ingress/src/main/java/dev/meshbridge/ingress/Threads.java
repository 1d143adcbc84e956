package dev.meshbridge.ingress;

import java.util.concurrent.ThreadFactory;

/** Named daemon threads for the module's single-thread executors. */
final class Threads {

    private Threads() {}

    static ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }
}
