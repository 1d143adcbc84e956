package dev.meshbridge.core.model;

import java.util.Objects;

/** Where an endpoint runs: region, zone and sub-zone, each possibly empty. */
public record Locality(String region, String zone, String subZone) implements Comparable<Locality> {

    public static final Locality NONE = new Locality("", "", "");

    public Locality {
        region = Objects.requireNonNullElse(region, "");
        zone = Objects.requireNonNullElse(zone, "");
        subZone = Objects.requireNonNullElse(subZone, "");
    }

    public static Locality of(String region, String zone) {
        return new Locality(region, zone, "");
    }

    public boolean isEmpty() {
        return region.isEmpty() && zone.isEmpty() && subZone.isEmpty();
    }

    @Override
    public int compareTo(Locality o) {
        int c = region.compareTo(o.region);
        if (c != 0) return c;
        c = zone.compareTo(o.zone);
        return c != 0 ? c : subZone.compareTo(o.subZone);
    }

    @Override
    public String toString() {
        return region + "/" + zone + "/" + subZone;
    }
}
