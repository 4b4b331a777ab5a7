"""Tests for the HA-free tool-call dialects."""
