"""Our own tools (memory, search, web_fetch, time) as an HA LLM API."""
