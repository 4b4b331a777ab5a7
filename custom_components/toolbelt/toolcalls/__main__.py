"""Debug a model's tool calls from the command line.

    python -m custom_components.toolbelt.toolcalls TOOLS.json < replies.jsonl

TOOLS.json is an OpenAI ``tools`` list (the catalog). Each stdin line is
``{"text": "..."}``; each output line is ``{"calls": [{"id", "name",
"arguments"}], "content": "..."}`` from the ``auto`` chain, plus ``"rejected":
[{"name", "reason"}]`` when call markup was refused. A bad line gives
``{"error": "..."}`` and the run continues: every non-blank line is answered.
Bytes that are not UTF-8 are read as U+FFFD; text that cannot be written as
UTF-8 (a lone surrogate) is written with ``\\u`` escapes instead. Answers are
flushed whenever the input read so far is answered: at once for a line typed
or piped alone, once per chunk for a file of many lines.

JSON is read and written with ``orjson`` (Home Assistant's own JSON library)
when it is installed: a third of the CLI's cost per reply was the standard
library's JSON. What orjson refuses (a lone surrogate, an integer past 64
bits, ``NaN`` in the input) goes through the standard library, written the
same way: compact, and a ``NaN`` or infinite argument as JSON's ``null`` (the
standard library's ``NaN`` is not JSON).
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator
import io
import json
import math
import os
import sys
from typing import Any, BinaryIO, TextIO

try:
    import orjson
except ImportError:  # the parser also runs without Home Assistant's packages
    orjson = None  # type: ignore[assignment]

from ..tools.definitions import ALIASES
from .catalog import Catalog
from .dialects.base import Dialect
from .registry import resolve_dialect

USAGE = "usage: python -m custom_components.toolbelt.toolcalls TOOLS.json < lines.jsonl"


def _load_catalog(path: str) -> Catalog:
    with open(path, encoding="utf-8") as handle:
        tools = json.load(handle)
    if isinstance(tools, dict) and isinstance(tools.get("tools"), list):
        tools = tools["tools"]
    if not isinstance(tools, list):
        raise ValueError("TOOLS.json must hold an OpenAI tools list")
    # Toolbelt's other names for its tools and HA's, as an agent's parser has.
    return Catalog.from_openai(tools, ALIASES)


def _loads(line: str) -> Any:
    """The line's value; the standard library's reading and errors for what
    orjson refuses."""
    if orjson is not None:
        try:
            return orjson.loads(line)
        except orjson.JSONDecodeError:
            pass
    return json.loads(line)


def _handle(line: str, catalog: Catalog, dialect: Dialect) -> dict[str, Any]:
    try:
        item = _loads(line)
    except (ValueError, RecursionError) as err:
        return {"error": f"input is not JSON: {err}"}
    if not isinstance(item, dict) or not isinstance(item.get("text"), str):
        return {"error": 'each input line must be an object with a "text" string'}
    try:
        result = dialect.parse(item["text"], catalog)
    except Exception as err:  # report and keep going
        return {"error": f"{type(err).__name__}: {err}"}
    answer: dict[str, Any] = {
        "calls": [
            {"id": call.id, "name": call.name, "arguments": call.arguments}
            for call in result.calls
        ],
        "content": result.content,
    }
    if result.rejected:
        answer["rejected"] = [
            {"name": r.name, "reason": r.reason} for r in result.rejected
        ]
    return answer


# Compact and strict, as orjson writes: no NaN (not JSON), no spaces.
_ENCODE = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False
).encode
_ENCODE_ASCII = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode


def _finite(value: Any) -> Any:
    """``value`` with each NaN or infinity as None (JSON's null), as orjson writes."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    return value


def _dumps(answer: dict) -> bytes:
    """One JSON line as UTF-8; ``\\u`` escapes when the text is not valid UTF-8."""
    if orjson is not None:
        try:
            return orjson.dumps(answer, option=orjson.OPT_APPEND_NEWLINE)
        except TypeError:  # a lone surrogate, an integer past 64 bits
            pass
    try:
        text = _ENCODE(answer)
    except ValueError:  # a NaN or an infinity
        answer = _finite(answer)
        text = _ENCODE(answer)
    try:
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return (_ENCODE_ASCII(answer) + "\n").encode("ascii")


def _batches(stdin: TextIO) -> Iterator[list[str]]:
    """Input lines, grouped as they arrive: each group is what one read brought.

    From a real file descriptor the input is read in chunks (a read waits only
    when nothing is pending), so a pipe of many lines is answered with one
    flush per chunk and a line typed alone still gets its answer at once.
    Anything else (a ``StringIO``) gives one line per group.
    """
    try:
        fd = stdin.fileno()
    except (OSError, ValueError, io.UnsupportedOperation):
        for line in stdin:
            yield [line]
        return
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    pending = ""
    while chunk := os.read(fd, 1 << 16):
        lines = (pending + decoder.decode(chunk)).split("\n")
        pending = lines.pop()
        if lines:
            yield lines
    pending += decoder.decode(b"", final=True)
    if pending:
        yield [pending]


def main(argv: list[str], stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    """Run the CLI; returns the process exit code."""
    if len(argv) != 1 or argv[0] in ("-h", "--help"):
        print(USAGE, file=stderr)
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    try:
        catalog = _load_catalog(argv[0])
    except (OSError, ValueError) as err:
        print(f"cannot read {argv[0]}: {err}", file=stderr)
        return 2
    dialect = resolve_dialect("auto")
    # Answers go out as bytes, under the text layer when there is one.
    buffer: BinaryIO | None = getattr(stdout, "buffer", None)
    for lines in _batches(stdin):
        for line in lines:
            if line.strip():
                answer = _dumps(_handle(line, catalog, dialect))
                if buffer is None:
                    stdout.write(answer.decode("utf-8"))
                else:
                    buffer.write(answer)
        (stdout if buffer is None else buffer).flush()
    return 0


if __name__ == "__main__":
    if isinstance(sys.stdin, io.TextIOWrapper):  # bad bytes never stop the stream
        sys.stdin.reconfigure(errors="replace")
    sys.exit(main(sys.argv[1:], sys.stdin, sys.stdout, sys.stderr))
