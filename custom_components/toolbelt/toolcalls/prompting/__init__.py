"""Asking for calls: the catalog as prompt text and as decoding constraints."""
