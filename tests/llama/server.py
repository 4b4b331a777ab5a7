"""A real llama-server on 127.0.0.1, serving a model made for the test.

``script/llama_server`` (run by ``script/setup``) unpacks Debian's
llama-server; without it these tests skip with its reason. Servers are shared
by the whole session: the ``llama`` fixture starts one per recipe and set of
flags on first use and stops them all at the end.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
import importlib.util
import os
from pathlib import Path
import re
import subprocess
import tempfile
import time

import pytest

from tests.llama.model import Recipe, model_path

PREFIX = Path(
    os.environ.get("TOOLBELT_LLAMA_PREFIX")
    or Path.home() / ".cache" / "toolbelt" / "llama"
)
START_TIMEOUT = 30.0
_LISTENING = re.compile(r"listening on http://127\.0\.0\.1:(\d+)")


def assist_tool(name: str) -> str:
    """An Assist tool's name as this HA sends it (``intent__HassTurnOn`` on 2026.10+).

    The model must write the name llama-server was given: its grammar allows
    only those.
    """
    namespaced = importlib.util.find_spec("homeassistant.components.intent.llm")
    return f"intent__{name}" if namespaced else name


def binary() -> Path:
    """The installed llama-server wrapper; skips the test when there is none."""
    wrapper = PREFIX / "bin" / "llama-server"
    if wrapper.exists():
        return wrapper
    reason = PREFIX / "UNAVAILABLE"
    why = (
        reason.read_text().strip()
        if reason.exists()
        else "no llama-server: run script/llama_server (script/setup does)"
    )
    if os.environ.get("TOOLBELT_REQUIRE_LLAMA_SERVER"):
        pytest.fail(f"{why} (.ci/run requires the real llama-server)")
    pytest.skip(why)


@dataclass
class LlamaServer:
    """One running llama-server process and the model it serves."""

    process: subprocess.Popen[bytes]
    port: int
    model: Path
    log: Path

    @property
    def base_url(self) -> str:
        """The OpenAI base URL, as a user types it into Toolbelt."""
        return f"http://127.0.0.1:{self.port}/v1"

    def log_text(self) -> str:
        """What the server logged so far."""
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        """End the process (it exits at once on SIGTERM)."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@dataclass
class LlamaServers:
    """Servers by recipe and flags, started on first use, stopped together."""

    logs: Path
    running: dict[tuple[Recipe, tuple[str, ...]], LlamaServer] = field(
        default_factory=dict
    )

    def serve(
        self, recipe: Recipe, *, context: int = 4096, api_key: str | None = None
    ) -> LlamaServer:
        """A server for ``recipe`` with ``--jinja``, one slot and ``-c context``."""
        flags = ("-c", str(context))
        if api_key is not None:
            flags += ("--api-key", api_key)
        key = (recipe, flags)
        server = self.running.get(key)
        if server is None or server.process.poll() is not None:
            server = self.running[key] = _start(model_path(recipe), flags, self.logs)
        return server

    def stop(self) -> None:
        """Stop every server."""
        for server in self.running.values():
            server.stop()
        self.running.clear()


def _start(model: Path, flags: tuple[str, ...], logs: Path) -> LlamaServer:
    log = Path(tempfile.mkstemp(prefix="llama-server-", suffix=".log", dir=logs)[1])
    command = [
        str(binary()),
        *("--model", str(model), "--jinja", "--host", "127.0.0.1", "--port", "0"),
        # One slot, one thread: the models are tiny and the cores are shared.
        *("--parallel", "1", "--threads", "1", "--no-webui"),
        *flags,
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if match := _LISTENING.search(log.read_text(errors="replace")):
            return LlamaServer(process, int(match[1]), model, log)
        if process.poll() is not None:
            break
        time.sleep(0.01)
    process.kill()
    process.wait()
    raise RuntimeError(f"llama-server did not start:\n{log.read_text()[-2000:]}")


@pytest.fixture(scope="session")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServers]:
    """Real llama-servers for the session; skips when none is installed."""
    binary()
    pytest.importorskip("gguf", reason="the gguf package makes the test models")
    servers = LlamaServers(tmp_path_factory.mktemp("llama"))
    yield servers
    servers.stop()
