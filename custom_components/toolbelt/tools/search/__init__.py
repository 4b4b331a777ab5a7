"""Web search backends: SearXNG, Brave, Tavily, DuckDuckGo."""
