package dev.meshbridge.core.admin;

import java.util.Map;

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
}
