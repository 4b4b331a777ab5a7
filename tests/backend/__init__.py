"""Tests for the model-server client (no Home Assistant)."""
