"""Decoding constraints built from the catalog, so a call cannot come out malformed.

Servers that constrain decoding take a JSON schema (llama.cpp, vLLM, SGLang,
LM Studio and Ollama through ``response_format``) or a GBNF grammar (llama.cpp's
``grammar``). Both say the same three things:

- ``ANY_CALL``: one call to one of the tools;
- ``ONE_CALL``: one call to the named tool;
- ``ANSWER_OR_CALL``: a free answer, or one call.

What the model then writes is what the agent's dialect reads:

- under a grammar, a call in the dialect's own wire format when ``FRAMES``
  knows it (hermes and qwen tags, ReAct's ``Action:`` lines, llama3's bare
  object, mistral's ``[TOOL_CALLS]`` list, xLAM's list, a fenced JSON block),
  so the constraint matches the format the system prompt describes; other
  dialects get the hermes frame and are read as hermes. An answer is prose
  that cannot open like a call. A reasoning model may first think: an optional
  ``<think>…</think>`` block, or (only when the chat template opened it,
  ``opened_reasoning``) reasoning closed by a lone ``</think>``, comes before
  the call or answer. Any other model's chat cannot pass as reasoning;
- under a JSON schema, which cannot express free text or wrappers, a call is
  the bare object ``{"name": "...", "arguments": {...}}`` that every JSON
  dialect reads, and an answer is ``{"answer": "..."}`` (``unwrap_answer``
  turns it back into prose).

Each tool's arguments are constrained by its own parameter schema. Built
constraints are cached per catalog fingerprint: a turn pays one ``repr``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
import hashlib
import json
from typing import Any

from ..catalog import Catalog

__all__ = [
    "CALL_CLOSE",
    "CALL_OPEN",
    "FRAMES",
    "ConstraintError",
    "Frame",
    "Shape",
    "fingerprint",
    "gbnf",
    "json_schema",
    "unwrap_answer",
]

CALL_OPEN = "<tool_call>"
CALL_CLOSE = "</tool_call>"
ANSWER_KEY = "answer"
_CACHE_SIZE = 64
_cache: dict[tuple[str, ...], Any] = {}


@dataclass(frozen=True, slots=True)
class Frame:
    """How a dialect writes one call around its JSON object, for a grammar.

    ``react`` writes the name on its own line instead of inside the object.
    ``answer_not`` lists the characters a prose answer may not start with, so
    that a half-made call can never pass as an answer.
    """

    open: str
    close: str
    args_key: str = "arguments"
    answer_not: str = "<"
    react: bool = False


_TAGGED = Frame("<tool_call>", "</tool_call>")
FRAMES: dict[str, Frame] = {
    "hermes": _TAGGED,
    "qwen": _TAGGED,
    "react": Frame("Action: ", "", react=True),
    "llama3": Frame("", "", args_key="parameters", answer_not="<{"),
    "mistral": Frame("[TOOL_CALLS][", "]", answer_not="<["),
    "xlam": Frame("[", "]", answer_not="<["),
    "markdown_json": Frame("```json\n", "```", answer_not="<`{"),
}
DEFAULT_FRAME = "hermes"


def frame_name(dialect: str) -> str:
    """The frame a grammar uses for ``dialect``: its own, or hermes."""
    return dialect if dialect in FRAMES else DEFAULT_FRAME


class Shape(StrEnum):
    """What the constrained reply may be."""

    ANY_CALL = "any_call"
    ONE_CALL = "one_call"
    ANSWER_OR_CALL = "answer_or_call"


class ConstraintError(ValueError):
    """The constraint asked for cannot be built (no tools, an unknown tool)."""


def fingerprint(catalog: Catalog) -> str:
    """A short digest of every name and schema: equal catalogs, equal keys.

    ``repr`` is four times cheaper than ``json.dumps``; key order counts, so a
    reordered schema only costs one rebuild, never a wrong constraint.
    """
    payload = repr([(t.name, t.parameters) for t in catalog])
    return hashlib.blake2b(payload.encode(), digest_size=12).hexdigest()


def json_schema(
    catalog: Catalog, shape: Shape, name: str | None = None, *, key: str | None = None
) -> dict[str, Any]:
    """The reply's JSON schema (shared and cached: do not modify it)."""
    return _cached("json", catalog, shape, name, key, _build_schema)


def gbnf(
    catalog: Catalog,
    shape: Shape,
    name: str | None = None,
    *,
    key: str | None = None,
    frame: str = DEFAULT_FRAME,
    opened_reasoning: bool = False,
) -> str:
    """The reply's GBNF grammar (llama.cpp syntax; cached), in ``frame``'s format.

    ``opened_reasoning``: the chat template opens the reasoning block, so the
    reply may start with reasoning closed by a lone ``</think>``.
    """
    if frame not in FRAMES:
        raise ConstraintError(
            f"no grammar frame {frame!r} (known: {', '.join(FRAMES)})"
        )
    think = _OPENED_THINK if opened_reasoning else _THINK
    return _cached(
        f"gbnf:{frame}:{opened_reasoning}",
        catalog,
        shape,
        name,
        key,
        lambda c, n, s: _build_gbnf(c, n, s, FRAMES[frame], think),
    )


def unwrap_answer(text: str) -> str | None:
    """The prose of a ``{"answer": "..."}`` reply, or None for anything else."""
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    try:
        value = json.loads(stripped)
    except ValueError:
        return None
    if isinstance(value, dict) and set(value) == {ANSWER_KEY}:
        answer = value[ANSWER_KEY]
        return answer if isinstance(answer, str) else None
    return None


# -- caching -----------------------------------------------------------------------


def _cached(language, catalog, shape, name, key, build):
    shape = Shape(shape)
    names = _tool_names(catalog, shape, name)
    cache_key = (language, key or fingerprint(catalog), shape.value, name or "")
    if (hit := _cache.get(cache_key)) is not None:
        return hit
    built = build(catalog, names, shape)
    if len(_cache) >= _CACHE_SIZE:
        _cache.pop(next(iter(_cache)))
    _cache[cache_key] = built
    return built


def _tool_names(catalog: Catalog, shape: Shape, name: str | None) -> tuple[str, ...]:
    if not catalog.names:
        raise ConstraintError("a constraint needs at least one tool")
    if shape is not Shape.ONE_CALL:
        return catalog.names
    if name is None:
        raise ConstraintError("a one-tool constraint needs the tool's name")
    if name not in catalog:
        known = ", ".join(catalog.names)
        raise ConstraintError(f"unknown tool {name!r} (known: {known})")
    return (name,)


# -- JSON schema ---------------------------------------------------------------------


def _call_schema(catalog: Catalog, name: str) -> dict[str, Any]:
    params = catalog.schema(name) or {"type": "object"}
    return {
        "type": "object",
        # enum rather than const: older schema-to-grammar converters lack const.
        "properties": {"name": {"enum": [name]}, "arguments": params},
        "required": ["name", "arguments"],
        "additionalProperties": False,
    }


def _build_schema(
    catalog: Catalog, names: tuple[str, ...], shape: Shape
) -> dict[str, Any]:
    options = [_call_schema(catalog, name) for name in names]
    if shape is Shape.ANSWER_OR_CALL:
        options.insert(
            0,
            {
                "type": "object",
                "properties": {ANSWER_KEY: {"type": "string"}},
                "required": [ANSWER_KEY],
                "additionalProperties": False,
            },
        )
    return options[0] if len(options) == 1 else {"anyOf": options}


# -- GBNF ------------------------------------------------------------------------------

_BASE_RULES = {
    "ws": "[ \\t\\n]*",
    "string": '"\\"" char* "\\"" ws',
    "char": '[^"\\\\\\x00-\\x1f] | "\\\\" (["\\\\/bfnrt] | "u" hex hex hex hex)',
    "hex": "[0-9a-fA-F]",
    "integer": '"-"? ("0" | [1-9] [0-9]*) ws',
    "number": '"-"? ("0" | [1-9] [0-9]*) ("." [0-9]+)? ([eE] [-+]? [0-9]+)? ws',
    "boolean": '("true" | "false") ws',
    "null": '"null" ws',
    "value": "(object | array | string | number | boolean | null)",
    "object": '"{" ws (string ":" ws value ("," ws string ":" ws value)*)? "}" ws',
    "array": '"[" ws (value ("," ws value)*)? "]" ws',
}


def _literal(text: str) -> str:
    """A GBNF string literal that matches ``text`` exactly."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\n", "\\n").replace("\r", "\\r") + '"'


def _json_literal(value: Any) -> str:
    return _literal(json.dumps(value, ensure_ascii=False)) + " ws"


class _Grammar:
    """Rules of one grammar; equal bodies share one rule."""

    def __init__(self) -> None:
        self.rules: dict[str, str] = {}
        self._names: dict[str, str] = {}

    def add(self, hint: str, body: str) -> str:
        if (known := self._names.get(body)) is not None:
            return known
        name = f"{hint}-{len(self.rules)}"
        self.rules[name] = body
        self._names[body] = name
        return name

    def value(self, schema: Any) -> str:
        """The rule (or inline expression) that matches one value of ``schema``."""
        if not isinstance(schema, dict) or not schema:
            return "value"
        if "const" in schema:
            return _json_literal(schema["const"])
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            body = " | ".join(_json_literal(v) for v in schema["enum"])
            return self.add("enum", f"({body})")
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list) and schema[key]:
                body = " | ".join(self.value(option) for option in schema[key])
                return self.add("alt", f"({body})")
        kinds = schema.get("type")
        if isinstance(kinds, list):
            body = " | ".join(self.value({**schema, "type": k}) for k in kinds)
            return self.add("alt", f"({body})") if kinds else "value"
        if kinds == "object" or "properties" in schema:
            return self._object(schema)
        if kinds == "array":
            item = self.value(schema.get("items"))
            return self.add("array", f'"[" ws ({item} ("," ws {item})*)? "]" ws')
        if kinds in ("string", "integer", "number", "boolean", "null"):
            return kinds
        return "value"

    def _object(self, schema: dict[str, Any]) -> str:
        props = schema.get("properties")
        if not isinstance(props, dict) or not props:
            return "object"
        required = [k for k in props if k in (schema.get("required") or ())]
        optional = [k for k in props if k not in required]
        pair = {k: f'{_json_literal(k)} ":" ws {self.value(props[k])}' for k in props}
        if required:
            # Required keys first (a grammar fixes the order), then optional ones.
            body = ' "," ws '.join(pair[k] for k in required)
            body += "".join(f' ("," ws {pair[k]})?' for k in optional)
        else:
            # Any subset in declared order; the first one present has no comma.
            starts = [
                pair[k] + "".join(f' ("," ws {pair[o]})?' for o in optional[i + 1 :])
                for i, k in enumerate(optional)
            ]
            body = "(" + " | ".join(starts) + ")?"
        return self.add("obj", f'"{{" ws {body} "}}" ws')

    def call_tail(self, catalog: Catalog, name: str, frame: Frame) -> str:
        """A call after its shared opening: the name decides at its first letter."""
        args = self.value(catalog.schema(name) or {"type": "object"})
        if frame.react:
            return self.add("call", f"{_literal(name + chr(10))} {_REACT_INPUT} {args}")
        key = _literal(f'"{frame.args_key}"')
        return self.add(
            "call", f'{_json_literal(name)} "," ws {key} ws ":" ws {args} "}}" ws'
        )


# ReAct: an optional thought line, then the action; its answer is a Final Answer.
_REACT_THOUGHT = '("Thought:" [^\\n]* "\\n")?'
_REACT_INPUT = '"Action Input: "'
# Reasoning before the reply: "<think>", text without "<", then "</think>";
# without its opener when the template opened it. Optional either way.
_THINK = '("<think>" [^<]* "</think>" ws)?'
_OPENED_THINK = '("<think>"? [^<]* "</think>" ws)?'


def _build_gbnf(
    catalog: Catalog, names: tuple[str, ...], shape: Shape, frame: Frame, think: str
) -> str:
    grammar = _Grammar()
    # One shared opening for every call: llguidance's lexer (inside llama.cpp)
    # does not backtrack, so alternatives must part at a distinct character.
    tails = " | ".join(grammar.call_tail(catalog, name, frame) for name in names)
    if frame.react:
        call = f"{_REACT_THOUGHT} {_literal(frame.open)} ({tails})"
        answer = f'{_REACT_THOUGHT} "Final Answer:" [^\\x00]*'
    else:
        opening = '"{" ws "\\"name\\"" ws ":" ws'
        parts = [_literal(frame.open) + " ws" if frame.open else "", opening]
        parts += [f"({tails})", _literal(frame.close) if frame.close else ""]
        call = " ".join(p for p in parts if p)
        avoid = "".join("\\" + c if c in "[]^\\" else c for c in frame.answer_not)
        answer = f"[^{avoid}] [^\\x00]*"
    body = f"({call} | {answer})" if shape is Shape.ANSWER_OR_CALL else f"({call})"
    lines = [f"root ::= {think} {body}"]
    lines += [f"{name} ::= {body}" for name, body in grammar.rules.items()]
    lines += [f"{name} ::= {body}" for name, body in _BASE_RULES.items()]
    return "\n".join(lines) + "\n"
