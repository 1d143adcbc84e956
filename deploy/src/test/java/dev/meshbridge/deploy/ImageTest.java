package dev.meshbridge.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PodSecurityContext;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * The two ways the image is built agree, and the chart runs it as the user it is built for: Jib's configuration in
 * {@code bridge-app/pom.xml} (the image a registry gets, built without Docker) and {@code docker-compose/Dockerfile}
 * (the demo's) run the same JVM flags as the same non-root user, expose the same ports and start with the same
 * arguments; the chart's pods run as that user.
 */
class ImageTest {

    @Test
    void jibImage_andDockerfile_andChart_agree() throws Exception {
        Document pom = DocumentBuilderFactory.newInstance()
                .newDocumentBuilder()
                .parse(Chart.ROOT.resolve("bridge-app/pom.xml").toFile());
        Element jib = null;
        NodeList plugins = pom.getElementsByTagName("plugin");
        for (int i = 0; i < plugins.getLength(); i++) {
            Element p = (Element) plugins.item(i);
            if (text(p, "artifactId").equals("jib-maven-plugin")
                    && p.getElementsByTagName("container").getLength() > 0) jib = p;
        }
        assertThat(jib).as("Jib is configured in bridge-app/pom.xml").isNotNull();
        Element container = (Element) jib.getElementsByTagName("container").item(0);
        List<String> jvmFlags = texts(container, "jvmFlag");
        List<String> args = texts(container, "arg");
        List<String> ports = texts(container, "port");
        String user = text(container, "user");

        String dockerfile = Files.readString(Chart.ROOT.resolve("docker-compose/Dockerfile"));
        List<String> entrypoint = jsonArray(dockerfile, "ENTRYPOINT");
        assertThat(entrypoint).startsWith("java").endsWith("-jar", "/opt/meshbridge/meshbridge.jar");
        assertThat(entrypoint.subList(1, entrypoint.size() - 2)).as("JVM flags").isEqualTo(jvmFlags);
        assertThat(jvmFlags)
                .contains("-XX:+ExitOnOutOfMemoryError")
                .anyMatch(f -> f.startsWith("-XX:MaxRAMPercentage="));
        assertThat(jsonArray(dockerfile, "CMD")).isEqualTo(args);
        assertThat(line(dockerfile, "USER")).isEqualTo(user);
        assertThat(Arrays.asList(line(dockerfile, "EXPOSE").split(" "))).isEqualTo(ports);
        assertThat(dockerfile).contains("FROM eclipse-temurin:21-jre AS bridge");
        assertThat(pom.getElementsByTagName("jib.base").item(0).getTextContent())
                .isEqualTo("eclipse-temurin:21-jre");

        // non-root: the user is a number other than 0, and the chart's pods run as it
        int uid = Integer.parseInt(user.substring(0, user.indexOf(':')));
        assertThat(uid).isPositive();
        PodSecurityContext pod =
                Chart.parse(Chart.template()).podTemplate().getSpec().getSecurityContext();
        assertThat(pod.getRunAsUser()).isEqualTo((long) uid);
        assertThat(pod.getRunAsGroup()).isEqualTo(Long.parseLong(user.substring(user.indexOf(':') + 1)));
    }

    private static String text(Element e, String tag) {
        return e.getElementsByTagName(tag).item(0).getTextContent().trim();
    }

    private static List<String> texts(Element e, String tag) {
        List<String> out = new ArrayList<>();
        NodeList l = e.getElementsByTagName(tag);
        for (int i = 0; i < l.getLength(); i++)
            out.add(l.item(i).getTextContent().trim());
        return out;
    }

    /** The JSON array after a Dockerfile instruction, e.g. {@code ENTRYPOINT ["java", ...]}. */
    private static List<String> jsonArray(String dockerfile, String instruction) {
        Matcher m = Pattern.compile("(?m)^" + instruction + " \\[(.*)]$").matcher(dockerfile);
        assertThat(m.find()).as("%s in the Dockerfile", instruction).isTrue();
        List<String> out = new ArrayList<>();
        Matcher s = Pattern.compile("\"([^\"]*)\"").matcher(m.group(1));
        while (s.find()) out.add(s.group(1));
        return out;
    }

    private static String line(String dockerfile, String instruction) {
        Matcher m = Pattern.compile("(?m)^" + instruction + " (.*)$").matcher(dockerfile);
        return m.find() ? m.group(1).trim() : "";
    }
}
