package dev.meshbridge.app;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntSupplier;

/** The admin pages of a running bridge over HTTP, read as an operator reads them. */
final class AdminPages {

    private final HttpClient http = HttpClient.newHttpClient();
    private final ObjectMapper json = new ObjectMapper();
    private final IntSupplier port;

    /** @param port the admin port (asked at each request: the bridge may start after this is made) */
    AdminPages(IntSupplier port) {
        this.port = port;
    }

    HttpResponse<String> get(String path) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port.getAsInt() + path))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** The endpoint addresses {@code /debug/catalog?service=...} shows, sorted. */
    List<String> servedAddresses(String serviceFilter) throws Exception {
        JsonNode page =
                json.readTree(get("/debug/catalog?service=" + serviceFilter).body());
        List<String> out = new ArrayList<>();
        for (JsonNode a : page.findValues("address")) out.add(a.asText());
        return out.stream().sorted().toList();
    }

    /** The {@code lastError} of the first registry on {@code /debug/registries}; empty when it has none. */
    String registryError() throws Exception {
        List<JsonNode> errors = json.readTree(get("/debug/registries").body()).findValues("lastError");
        return errors.isEmpty() || errors.get(0).isNull() ? "" : errors.get(0).asText();
    }

    /** The {@code state} of every registry on {@code /debug/registries}. */
    List<String> registryStates() throws Exception {
        return json.readTree(get("/debug/registries").body()).findValuesAsText("state");
    }
}
