package dev.meshbridge.samples.dubbo;

import java.util.function.Supplier;
import org.apache.dubbo.common.Version;

/** Greets, naming the provider instance that answered. */
final class GreeterImpl implements Greeter {

    private final GreeterProvider.Settings settings;
    private final Supplier<String> instance;

    GreeterImpl(GreeterProvider.Settings settings, Supplier<String> instance) {
        this.settings = settings;
        this.instance = instance;
    }

    @Override
    public Greeting hello(String name) {
        String who = name == null || name.isBlank() ? "world" : name;
        return new Greeting(
                "hello, " + who,
                settings.application(),
                instance.get(),
                settings.registryAddress(),
                "dubbo " + Version.getVersion() + " (triple)");
    }
}
