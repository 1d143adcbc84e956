package dev.meshbridge.ingress;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meshbridge.core.route.PathRewrite;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The rewrite annotations: ours, Higress's and ingress-nginx's capture-free form. */
class RewriteAnnotationTest {

    @Test
    void ours_andHigressRewritePath_replaceTheMatchedPrefix() {
        assertThat(RewriteAnnotation.parse(Map.of("meshbridge.dev/rewrite-target", "/api/"))
                        .rewrite())
                .contains(PathRewrite.prefix("/api"));
        assertThat(RewriteAnnotation.parse(Map.of("higress.io/rewrite-path", "/"))
                        .rewrite())
                .contains(PathRewrite.prefix("/"));
    }

    @Test
    void nginxAndHigressRewriteTarget_captureFree_replaceTheWholePath_butNotOnAPathEqualToTheTarget() {
        RewriteAnnotation.Result nginx =
                RewriteAnnotation.parse(Map.of("nginx.ingress.kubernetes.io/rewrite-target", "/"));
        RewriteAnnotation.Result higress = RewriteAnnotation.parse(Map.of("higress.io/rewrite-target", "/v1/api"));

        assertThat(nginx.rewrite()).contains(PathRewrite.wholePath("/"));
        assertThat(nginx.forPath("/dubbo")).contains(PathRewrite.wholePath("/"));
        assertThat(nginx.forPath("/")).isEmpty();
        assertThat(higress.rewrite()).contains(PathRewrite.wholePath("/v1/api"));
    }

    @Test
    void nginxRewriteTarget_withCaptureGroup_orOnARegexPath_refusesTheIngress() {
        RewriteAnnotation.Result captures =
                RewriteAnnotation.parse(Map.of("nginx.ingress.kubernetes.io/rewrite-target", "/$2"));
        RewriteAnnotation.Result plain =
                RewriteAnnotation.parse(Map.of("nginx.ingress.kubernetes.io/rewrite-target", "/"));

        assertThat(captures.rewrite()).isEmpty();
        assertThat(captures.problems())
                .singleElement()
                .hasToString("metadata.annotations[nginx.ingress.kubernetes.io/rewrite-target]: uses capture groups or"
                        + " variables ('/$2'); only the capture-free form (a plain path such as /api) is supported");
        assertThat(plain.pathProblem("/something(/|$)(.*)")).contains("is a regular expression");
        assertThat(plain.pathProblem("/v1.0/orders")).isNull();
        assertThat(RewriteAnnotation.parse(Map.of("higress.io/rewrite-path", "/a(b)"))
                        .pathProblem("/x(y)"))
                .isNull();
    }

    @Test
    void badTargets_refused_severalAnnotations_oursWinsWithAWarning() {
        assertThat(RewriteAnnotation.parse(Map.of("meshbridge.dev/rewrite-target", "api"))
                        .problems())
                .singleElement()
                .hasToString("metadata.annotations[meshbridge.dev/rewrite-target]: 'api' must start with /");
        assertThat(RewriteAnnotation.parse(Map.of("higress.io/rewrite-path", " "))
                        .problems())
                .singleElement()
                .hasToString("metadata.annotations[higress.io/rewrite-path]: is empty");

        RewriteAnnotation.Result both = RewriteAnnotation.parse(Map.of(
                "meshbridge.dev/rewrite-target", "/ours", "nginx.ingress.kubernetes.io/rewrite-target", "/nginx"));
        assertThat(both.rewrite()).contains(PathRewrite.prefix("/ours"));
        assertThat(both.warnings())
                .containsExactly("several rewrite annotations are set (meshbridge.dev/rewrite-target,"
                        + " nginx.ingress.kubernetes.io/rewrite-target); meshbridge.dev/rewrite-target is used");
    }
}
