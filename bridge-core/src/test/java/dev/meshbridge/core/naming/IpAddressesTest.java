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
}
