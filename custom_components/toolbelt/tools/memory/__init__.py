"""Memory backends: embedded SQLite (default) or a remote MCP server."""
