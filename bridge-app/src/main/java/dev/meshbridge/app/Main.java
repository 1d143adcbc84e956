package dev.meshbridge.app;

import dev.meshbridge.app.config.BridgeConfig;
import dev.meshbridge.app.demo.Demo;
import dev.meshbridge.core.config.ConfigException;
import dev.meshbridge.core.config.ConfigProblem;
import dev.meshbridge.core.config.RegistriesConfig;
import dev.meshbridge.core.spi.RegistryWatcherProvider;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.bridge.SLF4JBridgeHandler;

/** Command line entry point: {@code meshbridge --config bridge.yaml}, or {@code meshbridge --demo}. */
public final class Main {

    static final int EXIT_OK = 0;
    static final int EXIT_ERROR = 1;
    static final int EXIT_BAD_CONFIG = 2;

    private static final String USAGE = """
            Usage: meshbridge [--config FILE | --demo] [--check] [--admin-port N] [--xds-port N] [--mcp-port N]
                   meshbridge call HOST [--calls N] [--xds HOST:PORT]

              --config FILE    run with this bridge.yaml (watched: registry changes apply at run time)
              --demo           run against an embedded ZooKeeper holding sample Dubbo and Spring Cloud services
              --check          validate the configuration, print the problems, and exit (0 valid, 2 invalid)
              --admin-port N   override admin.port (0 picks a free port)
              --xds-port N     override xds.port (0 picks a free port)
              --mcp-port N     override mcp.port (0 picks a free port)
              --help           this text
              --version        the version
              call HOST        call the demo's GreeterService at xds:///HOST through the bridge with grpc-java's
                               xDS client, and print which instance answered each call (see call --help)

            xDS (Envoy, proxyless gRPC): port 15010; MCP (istiod configSources): port 15051
            Admin: http://127.0.0.1:15080/ready, /healthz, /metrics, /debug/catalog, /debug/registries,
                   /debug/xds, /debug/mcp, /debug/ingress
            """;

    /** What the command line asked for. */
    record Args(
            Path config,
            boolean demo,
            boolean check,
            Integer adminPort,
            Integer xdsPort,
            Integer mcpPort,
            boolean help,
            boolean version) {

        static Args parse(String[] argv) {
            Path config = null;
            boolean demo = false;
            boolean check = false;
            Integer adminPort = null;
            Integer xdsPort = null;
            Integer mcpPort = null;
            boolean help = false;
            boolean version = false;
            for (int i = 0; i < argv.length; i++) {
                String a = argv[i];
                String value = null;
                int eq = a.indexOf('=');
                if (a.startsWith("--") && eq > 0) {
                    value = a.substring(eq + 1);
                    a = a.substring(0, eq);
                }
                switch (a) {
                    case "--config", "-c" -> config = Path.of(value != null ? value : next(argv, ++i, a));
                    case "--demo" -> demo = true;
                    case "--check" -> check = true;
                    case "--admin-port" -> adminPort = port(a, value != null ? value : next(argv, ++i, a));
                    case "--xds-port" -> xdsPort = port(a, value != null ? value : next(argv, ++i, a));
                    case "--mcp-port" -> mcpPort = port(a, value != null ? value : next(argv, ++i, a));
                    case "--help", "-h" -> help = true;
                    case "--version" -> version = true;
                    default -> throw new IllegalArgumentException("unknown argument '" + argv[i] + "'");
                }
            }
            if (!help && !version && config == null && !demo) {
                throw new IllegalArgumentException("give --config FILE or --demo");
            }
            if (config != null && demo) throw new IllegalArgumentException("--config and --demo exclude each other");
            return new Args(config, demo, check, adminPort, xdsPort, mcpPort, help, version);
        }

        private static int port(String option, String v) {
            int p;
            try {
                p = Integer.parseInt(v);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(option + " needs a number, got '" + v + "'");
            }
            if (p < 0 || p > 65535) throw new IllegalArgumentException(option + " " + p + " is out of 0..65535");
            return p;
        }

        private static String next(String[] argv, int i, String option) {
            if (i >= argv.length) throw new IllegalArgumentException(option + " needs a value");
            return argv[i];
        }
    }

    private Main() {}

    public static void main(String[] argv) {
        System.exit(run(argv, System.out, System.err, true));
    }

    /** Runs the command; with {@code block} it waits until the process is asked to stop. Returns the exit code. */
    static int run(String[] argv, PrintStream out, PrintStream err, boolean block) {
        if (argv.length > 0 && argv[0].equals("call")) return dev.meshbridge.app.demo.DemoCall.run(argv, out, err);
        Args args;
        try {
            args = Args.parse(argv);
        } catch (IllegalArgumentException e) {
            err.println("meshbridge: " + e.getMessage());
            err.println();
            err.print(USAGE);
            return EXIT_ERROR;
        }
        if (args.help()) {
            out.print(USAGE);
            return EXIT_OK;
        }
        if (args.version()) {
            String v = Main.class.getPackage().getImplementationVersion();
            out.println("meshbridge " + (v == null ? "(development build)" : v));
            return EXIT_OK;
        }
        SLF4JBridgeHandler.removeHandlersForRootLogger();
        SLF4JBridgeHandler.install();
        Logger log = LoggerFactory.getLogger(Main.class);
        Map<String, RegistryWatcherProvider> providers = RegistriesConfig.loadProviders();

        Demo demo = null;
        try {
            BridgeConfig config;
            Path configFile = null;
            if (args.demo()) {
                demo = Demo.start();
                config = BridgeConfig.parse(
                        "demo",
                        demo.config(
                                args.adminPort() == null ? 15080 : args.adminPort(),
                                args.xdsPort() == null ? 15010 : args.xdsPort(),
                                args.mcpPort() == null ? 15051 : args.mcpPort()),
                        providers);
            } else {
                configFile = args.config();
                if (!Files.isRegularFile(configFile)) {
                    err.println("meshbridge: config file " + configFile + " does not exist");
                    return EXIT_BAD_CONFIG;
                }
                config = BridgeConfig.load(configFile, providers);
                if (args.adminPort() != null) config = config.withAdminPort(args.adminPort());
            }
            if (args.xdsPort() != null) config = config.withXdsPort(args.xdsPort());
            if (args.mcpPort() != null) config = config.withMcpPort(args.mcpPort());
            if (args.check()) {
                out.println("configuration is valid: " + config.registries().size() + " registries "
                        + config.registries().stream()
                                .map(r -> r.name() + " (" + r.type() + ")")
                                .toList());
                return EXIT_OK;
            }
            Bridge bridge = Bridge.start(config, configFile, providers);
            if (demo != null) {
                Demo d = demo;
                bridge.closeWith(d);
                out.println();
                out.println("meshbridge demo: embedded ZooKeeper at " + d.zookeeperAddress() + " with");
                d.samples().forEach(s -> out.println("  - " + s));
                out.println("xDS (Envoy, proxyless gRPC) on port " + bridge.xdsPort() + "; MCP (istiod) on port "
                        + bridge.mcpPort());
                out.println("The catalog:  curl -s http://127.0.0.1:" + bridge.adminPort() + "/debug/catalog");
                out.println("Registries:   curl -s http://127.0.0.1:" + bridge.adminPort() + "/debug/registries");
                out.println("Metrics:      curl -s http://127.0.0.1:" + bridge.adminPort() + "/metrics");
                out.println("Call the Triple service through the bridge (grpc-java's xDS client), in another shell:");
                out.println("              ./meshbridge call " + dev.meshbridge.app.demo.DemoRegistrations.GREETER_HOST
                        + " --calls 30" + (bridge.xdsPort() == 15010 ? "" : " --xds 127.0.0.1:" + bridge.xdsPort()));
                out.println("Stop with Ctrl-C.");
                out.println();
                demo = null;
            }
            if (!block) {
                bridge.close();
                return EXIT_OK;
            }
            CountDownLatch stopped = new CountDownLatch(1);
            Runtime.getRuntime()
                    .addShutdownHook(new Thread(
                            () -> {
                                log.info("stopping");
                                bridge.shutdownGracefully();
                                stopped.countDown();
                            },
                            "meshbridge-shutdown"));
            stopped.await();
            return EXIT_OK;
        } catch (ConfigException e) {
            err.println("meshbridge: the configuration is invalid:");
            for (ConfigProblem p : e.problems()) err.println("  " + p);
            return EXIT_BAD_CONFIG;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return EXIT_ERROR;
        } catch (Exception e) {
            log.error("meshbridge failed to start", e);
            err.println("meshbridge: failed to start: " + e);
            return EXIT_ERROR;
        } finally {
            if (demo != null) demo.close();
        }
    }
}
