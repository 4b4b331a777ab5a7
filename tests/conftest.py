"""Fixtures shared by every test: the scripted OpenAI-compatible model server."""

from tests.openai_server import (  # noqa: F401 - pytest fixtures
    closed_port_url,
    openai_server,
    openai_server_factory,
)
