package dev.meshbridge.core.util;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class LogTextTest {

    @Test
    void redact_stripsUserInfo_fromPlainAndEncodedUrls_andMasksPasswordParameters() {
        String url = "dubbo://admin:s3cret@10.0.0.1:20880/org.demo.Greeter?version=1.0.0&password=hunter2&weight=5";
        String plain = LogText.redact("bad URL in '" + url + "'");
        assertThat(plain)
                .doesNotContain("admin", "s3cret", "hunter2")
                .contains("dubbo://10.0.0.1:20880/org.demo.Greeter", "password=***", "weight=5");
        String encoded =
                LogText.redact("/dubbo/org.demo.Greeter/providers/" + URLEncoder.encode(url, StandardCharsets.UTF_8));
        assertThat(encoded).doesNotContain("admin", "s3cret", "hunter2").contains("10.0.0.1%3A20880");
        assertThat(LogText.redact("zookeeper://zk1:2181/x")).isEqualTo("zookeeper://zk1:2181/x");
        assertThat(LogText.redact("mail me at a@b.c")).isEqualTo("mail me at a@b.c");
    }

    @Test
    void escape_makesControlCharactersVisible_andBoundsTheLength() {
        assertThat(LogText.escape("a\nb\tc\u0007")).isEqualTo("a\\nb\\tc\\u0007");
        assertThat(LogText.escape("plain")).isEqualTo("plain");
        String longText = "x".repeat(LogText.MAX_LENGTH + 5);
        assertThat(LogText.escape(longText)).hasSize(LogText.MAX_LENGTH + "...(2005 chars)".length());
    }
}
