"""Safe web page fetching: SSRF policy, capped download, text extraction."""
