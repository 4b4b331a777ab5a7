"""Tests of our own tools: backends against real local servers, and the HA LLM API."""
