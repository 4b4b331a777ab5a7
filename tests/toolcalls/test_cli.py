"""The CLI contract: catalog file, JSON lines in, one JSON line out per input."""

from __future__ import annotations

import json
from pathlib import Path
import select
import subprocess
import sys

ROOT = Path(__file__).parent.parent.parent
TOOLS = ROOT / "tests" / "fixtures" / "corpus" / "tools.json"


def _run(lines: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "custom_components.toolbelt.toolcalls", *args],
        input="".join(line + "\n" for line in lines),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )


def test_cli_parses_lines_and_survives_bad_input() -> None:
    lines = [
        json.dumps(
            {
                "text": '<tool_call>{"name": "HassTurnOn", "arguments": {"name": "desk"}}</tool_call>Done.'
            }
        ),
        "this is not json",
        json.dumps({"text": 42}),
        json.dumps({"text": "<think>hm</think>Just prose."}),
        json.dumps(
            {"text": '[TOOL_CALLS]HassTurnOff[CALL_ID]a1B2c3D4e[ARGS]{"area": "porch"}'}
        ),
    ]
    proc = _run(lines, str(TOOLS))
    assert proc.returncode == 0, proc.stderr
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(out) == 5
    first = out[0]
    assert set(first) == {"calls", "content"}
    assert [(c["name"], c["arguments"]) for c in first["calls"]] == [
        ("HassTurnOn", {"name": "desk"})
    ]
    assert first["calls"][0]["id"]
    assert first["content"] == "Done."
    assert "error" in out[1]
    assert "error" in out[2]
    assert out[3] == {"calls": [], "content": "Just prose."}
    assert out[4]["calls"] == [
        {"id": "a1B2c3D4e", "name": "HassTurnOff", "arguments": {"area": "porch"}}
    ]


def test_cli_imports_no_home_assistant() -> None:
    code = (
        "import sys, custom_components.toolbelt.toolcalls.__main__;"
        "print(any(m.startswith('homeassistant') for m in sys.modules))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert proc.stdout.strip() == "False", proc.stderr


def test_cli_usage_and_missing_catalog() -> None:
    assert _run([]).returncode == 2
    proc = _run([], "/nonexistent/tools.json")
    assert proc.returncode == 2
    assert "cannot read" in proc.stderr


def test_cli_answers_every_hostile_line() -> None:
    call = (
        '<tool_call>{"name": "HassTurnOn", "arguments": {"name": "desk"}}</tool_call>'
    )
    lines = [
        json.dumps({"text": "hi \ud800 there"}),  # a lone surrogate (as an escape)
        json.dumps({"text": "[" * 16_000}),
        "[" * 16_000,  # not an object, and too deep for json
        json.dumps({"text": "[HassTurnOn(name=" + "[" * 600 + "]" * 600 + ")]"}),
        json.dumps({"text": f"[HassLightSet(brightness={'9' * 4301})]"}),
        json.dumps({"text": "functions." * 1000 + "HassTurnOn({})"}),
        json.dumps({"text": "\udfff" + call}),
    ]
    raw = "".join(line + "\n" for line in lines).encode("utf-8")
    raw += b'{"text": "bad \xed\xa0\x80 bytes"}\n'  # not UTF-8 at all
    proc = subprocess.run(
        [sys.executable, "-m", "custom_components.toolbelt.toolcalls", str(TOOLS)],
        input=raw,
        capture_output=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = [json.loads(line) for line in proc.stdout.decode("utf-8").splitlines()]
    assert len(out) == len(lines) + 1
    assert out[0] == {"calls": [], "content": "hi \ud800 there"}
    assert out[1]["calls"] == []
    assert "error" in out[2]
    assert "nested deeper than 64" in out[3]["rejected"][0]["reason"]
    assert "4301 digits" in out[4]["rejected"][0]["reason"]
    assert out[5]["calls"] == []
    assert out[6]["calls"][0]["arguments"] == {"name": "desk"}
    assert out[7]["content"] == "bad \ufffd\ufffd\ufffd bytes"


def test_cli_answers_each_line_before_the_next_arrives() -> None:
    """Interactive use: an answer is flushed as soon as its line is read, while
    a piped file is answered in chunks (``_batches``)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "custom_components.toolbelt.toolcalls", str(TOOLS)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    try:
        for text in ("The porch light is off.", "The door is locked."):
            proc.stdin.write(json.dumps({"text": text}) + "\n")
            proc.stdin.flush()
            ready, _, _ = select.select([proc.stdout], [], [], 60)
            assert ready, "no answer before the next line"
            assert json.loads(proc.stdout.readline())["content"] == text
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0


def _not_json(constant: str) -> None:
    raise AssertionError(f"{constant} is not JSON")


_WITHOUT_ORJSON = (
    "import sys; sys.modules['orjson'] = None; import runpy;"
    "runpy.run_module('custom_components.toolbelt.toolcalls', run_name='__main__')"
)


def test_cli_answers_the_same_with_and_without_orjson() -> None:
    """orjson (HA's JSON library) reads and writes the lines when installed; what
    it refuses (lone surrogates, integers past 64 bits, NaN in the input) falls
    back to the standard library, and every answer is the same strict, compact
    JSON line either way: a NaN or infinite argument is null, never NaN."""
    texts = [
        '<tool_call>{"name": "HassTurnOn", "arguments": {"name": "Küche ☕"}}</tool_call>',
        "hi \ud800 there",
        '{"name": "HassLightSet", "arguments": {"name": "lamp", "brightness": NaN}}',
        # orjson refuses this answer (an integer past 64 bits), NaN and all
        '<tool_call>{"name": "HassTurnOn", "arguments": {"name": "x", "b": NaN, '
        f'"c": {10**23}}}}}</tool_call>',
        'Ein ganz normaler Satz mit Umlauten: äöü — und "Anführungszeichen".',
    ]
    lines = [json.dumps({"text": text}) for text in texts]
    lines += ['{"text": "big", "n": 123456789012345678901234567890}', "[1, 2", "NaN"]
    feed = "".join(line + "\n" for line in lines).encode("utf-8")
    answers = []
    for argv in (
        ["-m", "custom_components.toolbelt.toolcalls", str(TOOLS)],
        ["-c", _WITHOUT_ORJSON, str(TOOLS)],
    ):
        proc = subprocess.run(
            [sys.executable, *argv],
            input=feed,
            capture_output=True,
            cwd=ROOT,
            timeout=60,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        out = proc.stdout.decode("utf-8").splitlines()
        assert len(out) == len(lines)
        assert not any('": ' in line or '", ' in line for line in out)  # compact
        parsed = [json.loads(line, parse_constant=_not_json) for line in out]
        for answer in parsed:
            for call in answer.get("calls", ()):
                call["id"] = "call"
        answers.append(parsed)
    with_orjson, without = answers
    assert with_orjson == without
    assert with_orjson[0]["calls"][0]["arguments"] == {"name": "Küche ☕"}
    assert with_orjson[1]["content"] == "hi \ud800 there"
    assert with_orjson[2]["calls"][0]["arguments"]["brightness"] is None
    assert with_orjson[3]["calls"][0]["arguments"] == {
        "name": "x",
        "b": None,
        "c": 10**23,
    }
    assert with_orjson[5] == {"calls": [], "content": "big"}
    assert all("error" in answer for answer in with_orjson[6:])
