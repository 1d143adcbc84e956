package dev.meshbridge.core.admin;

import java.util.Map;
import java.util.function.Function;

/**
 * A page of the admin server's {@code /debug/<name>} tree, contributed by a module (the xDS server, the MCP server,
 * the catalog). The admin server renders what {@link #debug} returns as JSON, so return records, lists and maps.
 */
public interface DebugSource {

    /** The path segment under {@code /debug/}, e.g. {@code xds}. */
    String name();

    /** One line for the index page at {@code /debug}. */
    String description();

    /**
     * The current view.
     *
     * @param query the request's query parameters (for filters such as {@code ?registry=zk1&service=orders})
     */
    Object debug(Map<String, String> query);

    /** A page from a name, a description and a function of the query. */
    static DebugSource of(String name, String description, Function<Map<String, String>, Object> view) {
        return new DebugSource() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public String description() {
                return description;
            }

            @Override
            public Object debug(Map<String, String> query) {
                return view.apply(query);
            }
        };
    }
}
