package org.springframework.cloud.zookeeper.discovery;

import java.util.HashMap;
import java.util.Map;

/**
 * The payload Spring Cloud ZooKeeper registers with curator x-discovery, reproduced under its own class name so that
 * instances written in tests carry exactly the {@code "@class": "org.springframework.cloud.zookeeper.discovery
 * .ZookeeperInstance"} a Spring Cloud application writes: a type the bridge does not have and must not load.
 */
public class ZookeeperInstance {

    private String id;
    private String name;
    private Map<String, String> metadata = new HashMap<>();

    @SuppressWarnings("unused")
    private ZookeeperInstance() {}

    public ZookeeperInstance(String id, String name, Map<String, String> metadata) {
        this.id = id;
        this.name = name;
        this.metadata = new HashMap<>(metadata);
    }

    public String getId() {
        return id;
    }

    public void setId(String id) {
        this.id = id;
    }

    public String getName() {
        return name;
    }

    public void setName(String name) {
        this.name = name;
    }

    public Map<String, String> getMetadata() {
        return metadata;
    }

    public void setMetadata(Map<String, String> metadata) {
        this.metadata = metadata;
    }
}
