"""Reading calls: JSON and Python call syntax, scans and argument coercion."""
