package dev.meshbridge.core.naming;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class IpAddressesTest {

    @Test
    void literal_acceptsIpv4AndIpv6_dropsBrackets_andNeverLooksUpNames() {
        assertThat(IpAddresses.literal("10.0.0.1")).isEqualTo("10.0.0.1");
        assertThat(IpAddresses.literal(" 192.168.1.254 ")).isEqualTo("192.168.1.254");
        assertThat(IpAddresses.literal("fd00::1")).isEqualTo("fd00::1");
        assertThat(IpAddresses.literal("[::1]")).isEqualTo("::1");
        assertThat(IpAddresses.literal("256.0.0.1")).isNull();
        assertThat(IpAddresses.literal("10.0.0")).isNull();
        assertThat(IpAddresses.literal("localhost")).isNull();
        assertThat(IpAddresses.literal("orders-7f9c.pod.cluster.local")).isNull();
        assertThat(IpAddresses.literal("cafe")).isNull();
        assertThat(IpAddresses.isLiteral("::ffff:10.0.0.1")).isTrue();
    }

    @Test
    void bare_isExactlyALiteral_asAnXdsAddressFieldMustHold() {
        assertThat(IpAddresses.isBare("10.0.0.1")).isTrue();
        assertThat(IpAddresses.isBare("2001:db8::1")).isTrue();
        assertThat(IpAddresses.isBare("::ffff:10.0.0.1")).isTrue();
        assertThat(IpAddresses.isBare(" 10.0.0.1")).isFalse();
        assertThat(IpAddresses.isBare("[::1]")).isFalse();
        assertThat(IpAddresses.isBare("010.0.0.1")).isFalse();
        assertThat(IpAddresses.isBare("fe80::1%eth0")).isFalse();
        assertThat(IpAddresses.isBare("1:2:3:4:5:6:7:8:9")).isFalse();
        assertThat(IpAddresses.isBare("1::2::3")).isFalse();
        assertThat(IpAddresses.isBare("")).isFalse();
        assertThat(IpAddresses.literal("[10.0.0.1]")).isNull();
    }

    @Test
    void ipv4Bits_packsExactlyTheCanonicalLiterals_andTheTextComesBackAsGiven() {
        for (String literal : new String[] {"0.0.0.0", "10.0.0.1", "192.168.1.254", "255.255.255.255", "1.20.100.9"}) {
            long bits = IpAddresses.ipv4Bits(literal);
            assertThat(bits).as(literal).isBetween(0L, 0xffffffffL);
            assertThat(IpAddresses.ipv4Text((int) bits)).isEqualTo(literal);
        }
        assertThat(IpAddresses.ipv4Bits("10.1.2.3")).isEqualTo((10L << 24) | (1 << 16) | (2 << 8) | 3);
        for (String other : new String[] {
            "010.0.0.1",
            "10.00.0.1",
            "256.0.0.1",
            "10.0.0",
            "10.0.0.1.",
            "10.0.0.1.2",
            ".10.0.0.1",
            "10..0.1",
            " 10.0.0.1",
            "10.0.0.1 ",
            "1000.0.0.1",
            "10.0.0.1000",
            "+1.0.0.1",
            "a.b.c.d",
            "::1",
            "fd00::1",
            "host-1",
            "10.0.0.-1",
            ""
        }) {
            assertThat(IpAddresses.ipv4Bits(other)).as("'%s'", other).isEqualTo(-1);
            assertThat(IpAddresses.isIpv4(other)).as("'%s'", other).isFalse();
        }
    }

    @Test
    void compareIpv4Text_ordersAsTheTextsDo() {
        // every pair of octet values, in each of the four places
        for (int shift = 0; shift <= 24; shift += 8) {
            for (int x = 0; x < 256; x++) {
                for (int y = 0; y < 256; y++) {
                    int a = (7 << ((shift + 8) % 32)) | (x << shift);
                    int b = (7 << ((shift + 8) % 32)) | (y << shift);
                    assertThat(Integer.signum(IpAddresses.compareIpv4Text(a, b)))
                            .as("%s vs %s", IpAddresses.ipv4Text(a), IpAddresses.ipv4Text(b))
                            .isEqualTo(Integer.signum(IpAddresses.ipv4Text(a).compareTo(IpAddresses.ipv4Text(b))));
                }
            }
        }
        java.util.Random random = new java.util.Random(22);
        for (int i = 0; i < 200_000; i++) {
            // octets drawn mostly from a few values, so pairs share prefixes
            int a = octets(random);
            int b = random.nextInt(4) == 0 ? a ^ (1 << random.nextInt(32)) : octets(random);
            String ta = IpAddresses.ipv4Text(a);
            String tb = IpAddresses.ipv4Text(b);
            assertThat(IpAddresses.ipv4Bits(ta)).isEqualTo(a & 0xffffffffL);
            assertThat(Integer.signum(IpAddresses.compareIpv4Text(a, b)))
                    .as("%s vs %s", ta, tb)
                    .isEqualTo(Integer.signum(ta.compareTo(tb)));
        }
    }

    private static int octets(java.util.Random random) {
        int[] some = {0, 1, 2, 9, 10, 11, 19, 25, 99, 100, 101, 199, 200, 249, 250, 255};
        int v = 0;
        for (int i = 0; i < 4; i++)
            v = (v << 8) | (random.nextBoolean() ? some[random.nextInt(some.length)] : random.nextInt(256));
        return v;
    }
}
