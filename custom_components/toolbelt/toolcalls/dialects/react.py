"""ReAct text tool calling, the universal fallback for local models.

``Thought: ... / Action: tool / Action Input: {json}``; the loop answers with
``Observation: ...`` and the model ends with ``Final Answer: ...``. Also read:
``# Tool: / # Arguments:`` and ``Tool: / Function:`` headers, JSON-blob ReAct
(``Action: ```json {"action": .., "action_input": ..}````), a Python-style
``Action: tool(a=1)``, and fenced JSON calls. A non-JSON ``Action Input`` fills
the tool's first required string parameter. Everything after a hallucinated
``Observation:`` is discarded; ``Action: None`` is not a call.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import islice
import re
from typing import Any, ClassVar, override

from ..catalog import Catalog
from ..model import (
    ParseResult,
    RejectedCall,
    ToolCall,
)
from ..prompting.render import compact_catalog, result_text
from ..reading.calls import (
    Found,
    build_result,
    call_from_object,
    make_call,
)
from ..reading.jsonrepair import (
    LooseJSONError,
    TruncatedJSONError,
    find_json_end,
    loads_loose,
    strict_json_at,
)
from ..reading.pycall import PyCallError, parse_python_calls
from ..reading.scan import skip_ws
from ..text.fences import find_fences
from ..text.sanitize import clean, strip_react
from .base import Dialect
from .markdown_json import fenced_json_calls

__all__ = ["ReactDialect"]

# The lookahead (a label's first letter after any "**"/"#" prefix) rejects most
# lines before the alternation runs: 4-7x faster on a megabyte of short lines.
_LABEL = re.compile(
    r"^(?=[ \t*#]*[TAOFIP])[ \t]*(\*\*|#+[ \t]*)?"
    r"(Thought|Action[ \t]+Input|Action|Observation|Final[ \t]+Answer|Tool[ \t]+Input"
    r"|Tool|Function|Arguments|Args|Parameters|Input)"
    r"(?:[ \t]+\d{1,3})?(?:\*\*)?[ \t]*:(?:\*\*)?[ \t]*",
    re.M | re.I,
)
# Labels read per reply; a scratchpad longer than this is garbage.
MAX_LABELS = 512
_ACTION = {"action"}
_HEADER = {"tool", "function"}
_INPUT = {"actioninput", "toolinput", "arguments", "args", "parameters", "input"}
_NO_ACTION = {
    "",
    "none",
    "n/a",
    "na",
    "no action",
    "noaction",
    "no",
    "null",
    "finalanswer",
    "final answer",
    "nothing",
}
_NAME = re.compile(r"[A-Za-z_][\w.\-:]{0,127}")
_PY_CALL = re.compile(r"[A-Za-z_][\w.]*\s*\(.*\)\s*$", re.S)


@dataclass(slots=True)
class _Pending:
    kind: str  # "action" or "header"
    start: int
    name: str
    strong: bool  # "# Tool:" / "Action:" (strong) vs bare "Tool:" (weak, prose-like)


@lru_cache(maxsize=64)
def _kind(label: str) -> str:
    key = "".join(label.lower().split())
    if key in _ACTION:
        return "action"
    if key in _HEADER:
        return "header"
    if key in _INPUT:
        return "input"
    if key == "observation":
        return "observation"
    if key == "finalanswer":
        return "final"
    return "thought"


def _clean_name(value: str) -> str:
    name = value.strip().strip("`*\"'[]").strip()
    name = name.rstrip(".:;,")
    if name.endswith("()"):
        name = name[:-2]
    return name.strip()


def _rstrip_end(text: str, floor: int, end: int) -> int:
    """``end`` moved back over trailing whitespace (not below ``floor``)."""
    while end > floor and text[end - 1] in " \t\r\n":
        end -= 1
    return end


def _strip_junk(text: str, pos: int, end: int) -> int:
    """Skip markdown noise (``**``, backticks, a ``json`` fence tag) before input."""
    while pos < end:
        pos = skip_ws(text, pos)
        if text.startswith("```", pos):
            pos += 3
            while pos < end and text[pos].isalnum():
                pos += 1
            continue
        if pos < end and text[pos] in "*`:":
            pos += 1
            continue
        break
    return pos


def _loads(text: str, pos: int, stop: int) -> Any:
    """``loads_loose(text[pos:stop])``, taken from the strict read that
    ``find_json_end`` made (kept per reply) when that ends at ``stop``."""
    strict = strict_json_at(text, pos)
    if strict is not None and strict[1] == stop:
        return strict[0]
    return loads_loose(text[pos:stop])


class ReactDialect(Dialect):
    """Thought / Action / Action Input / Observation."""

    name: ClassVar[str] = "react"
    markers: ClassVar[tuple[str, ...]] = (
        "\nAction:",
        "Action Input:",
        "\n# Tool:",
        "\nThought:",
    )
    start_markers: ClassVar[tuple[str, ...]] = (
        "Thought:",
        "Action:",
        "# Tool:",
        "Tool:",
        "Function:",
    )
    # Labels are matched case-insensitively, so look for both common spellings.
    triggers: ClassVar[tuple[str, ...]] = (
        "Action",
        "action",
        "ACTION",
        "Tool",
        "tool:",
        "Function",
        "function:",
        "Final Answer",
        "```",
    )
    # Scratchpad labels all end in a colon (``strip_react``).
    cleans: ClassVar[tuple[str, ...]] = (":",)

    thought_first: ClassVar[bool] = True

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        labels = list(islice(_LABEL.finditer(text), MAX_LABELS))
        found: list[Found] = []
        final: str | None = None
        cut = len(text)
        if labels:
            found, final, cut = self._scan(text, labels, catalog)
        if not any(isinstance(f.call, (ToolCall, RejectedCall)) for f in found):
            fenced = fenced_json_calls(text, catalog)
            if fenced:
                return build_result(text, fenced, self.name, sanitize=self.sanitize)
            if final is not None:
                _, reasoning = clean(text)
                # JSON-blob "Final Answer" markup was consumed: say so via ``end``.
                end = max((f.end for f in found), default=None)
                return ParseResult(
                    content=final.strip(),
                    reasoning=reasoning,
                    dialect=self.name,
                    end=end,
                )
            return build_result(text, [], self.name, sanitize=self.sanitize)
        react_style = any(
            _kind(m.group(2)) in ("action", "thought") and m.start() < cut
            for m in labels
        )
        result = build_result(text[:cut], found, self.name, sanitize=self.sanitize)
        if react_style:
            # In ReAct, text around the action is the model's thought; only a
            # Final Answer given before the cut would be for the user.
            if result.content:
                result.reasoning = "\n".join(
                    p for p in (result.reasoning, result.content) if p
                )
            result.content = (final or "").strip()
        return result

    def _scan(
        self, text: str, labels: list[re.Match[str]], catalog: Catalog
    ) -> tuple[list[Found], str | None, int]:
        found: list[Found] = []
        final: str | None = None
        pending: _Pending | None = None
        cut = len(text)
        seen_action = False
        for index, match in enumerate(labels, 1):
            if match.start() >= cut:
                break
            kind = _kind(match.group(2))
            if kind == "thought":
                continue  # the model's own words: nothing to read
            if kind == "observation":
                if seen_action:
                    cut = match.start()
                    break
                continue
            # The label's text runs to the next label (``index`` is the next's).
            region_end = min(labels[index].start(), cut) if index < len(labels) else cut
            if kind == "final":
                if final is None:
                    final = text[match.end() : region_end]
                continue
            if kind in ("action", "header"):
                if pending is not None:
                    self._close(pending, text, catalog, found)
                pending = None
                strong = kind == "action" or bool(match.group(1))
                seen_action = seen_action or kind == "action"
                if text.find("{", match.end(), region_end) >= 0:  # a JSON blob?
                    blob = self._blob(text, match, region_end, catalog, found)
                    if blob is not None:
                        final = blob if final is None else final
                        continue
                line_end = text.find("\n", match.end())
                line_end = region_end if line_end < 0 else min(line_end, region_end)
                value = text[match.end() : line_end]
                if (
                    "(" in value
                    and _PY_CALL.match(value.strip())
                    and self._python(
                        text, match.start(), line_end, value, catalog, found
                    )
                ):
                    continue
                name = _clean_name(value)
                if name.lower() in _NO_ACTION:
                    continue
                pending = _Pending(
                    "action" if kind == "action" else "header",
                    match.start(),
                    name,
                    strong,
                )
                continue
            if kind == "input" and pending is not None:
                self._input(pending, text, match.end(), region_end, catalog, found)
                pending = None
        if pending is not None:
            self._close(pending, text, catalog, found)
        return found, final, cut

    @staticmethod
    def _close(
        pending: _Pending, text: str, catalog: Catalog, found: list[Found]
    ) -> None:
        """An action without input: a call with no arguments, if the name is real."""
        if not pending.strong or not _NAME.fullmatch(pending.name):
            return
        if catalog.resolve(pending.name) is None:
            return
        line_end = text.find("\n", pending.start)
        end = len(text) if line_end < 0 else line_end
        found.append(
            Found(
                pending.start,
                end,
                make_call(catalog, pending.name, {}, raw=text[pending.start : end]),
            )
        )

    @staticmethod
    def _input(
        pending: _Pending,
        text: str,
        start: int,
        end: int,
        catalog: Catalog,
        found: list[Found],
    ) -> None:
        name = pending.name
        if not _NAME.fullmatch(name):
            return  # "Tool: a Phillips screwdriver ..." is prose
        resolved = catalog.resolve(name)
        if resolved is None and (not pending.strong or _in_fence(text, pending.start)):
            return  # prose, or a code sample showing the syntax: left as written
        pos = _strip_junk(text, start, end)
        raw_end = _rstrip_end(text, pos, end)
        args: Any
        if pos < end and text[pos] in "{[":
            json_end = find_json_end(text, pos, end)
            stop = raw_end if json_end < 0 else json_end
            try:
                args = _loads(text, pos, stop)
            except TruncatedJSONError:
                reject = RejectedCall(
                    name, text[pending.start : raw_end], "call is truncated"
                )
                found.append(Found(pending.start, raw_end, reject))
                return
            except LooseJSONError:
                args = text[pos:raw_end].strip()
            else:
                raw_end = stop
                after = skip_ws(text, stop)
                if after < end and text[after] in "}]":
                    raw_end = after + 1
                # Closing fence right after the JSON belongs to the call.
                after = skip_ws(text, raw_end)
                if text.startswith("```", after) and after < end:
                    raw_end = after + 3
            if isinstance(args, list):
                args = {}
        else:
            args = text[pos:raw_end].strip().strip("`").strip()
            if len(args) >= 2 and args[0] == args[-1] and args[0] in "\"'":
                args = args[1:-1]
            elif args[:1] == '"' and '"' not in args[1:]:
                args = args[1:]  # a dangling opening quote (crewAI keeps the text)
        if isinstance(args, str):
            param = catalog.first_required_string(resolved) if resolved else None
            args = {param: args} if param and args and args.lower() != "none" else {}
        raw = text[pending.start : raw_end]
        found.append(
            Found(pending.start, raw_end, make_call(catalog, name, args, raw=raw))
        )

    @staticmethod
    def _blob(
        text: str, match: re.Match[str], end: int, catalog: Catalog, found: list[Found]
    ) -> str | None:
        """JSON-blob ReAct after ``Action:``; returns a Final Answer text if given."""
        pos = _strip_junk(text, match.end(), end)
        if pos >= end or text[pos] != "{":
            return None
        json_end = find_json_end(text, pos, end)
        if json_end < 0:
            return None
        try:
            blob = _loads(text, pos, json_end)
        except LooseJSONError:
            return None
        if not isinstance(blob, dict):
            return None
        raw_end = json_end
        after = skip_ws(text, json_end)
        if text.startswith("```", after) and after < end:
            raw_end = after + 3
        action = blob.get("action")
        if isinstance(action, str) and _clean_name(action).lower() in _NO_ACTION:
            answer = blob.get("action_input")
            found.append(Found(match.start(), raw_end, None))
            return answer if isinstance(answer, str) else result_text(answer)
        call = call_from_object(blob, catalog, raw=text[match.start() : raw_end])
        if call is None:
            return None
        found.append(Found(match.start(), raw_end, call))
        return None

    @staticmethod
    def _python(
        text: str,
        start: int,
        end: int,
        value: str,
        catalog: Catalog,
        found: list[Found],
    ) -> bool:
        """``Action: tool(a=1)`` written as a Python call."""
        try:
            parsed = parse_python_calls(value)
        except PyCallError:
            return False
        calls = []
        for name, kwargs, positional in parsed:
            resolved = catalog.resolve(name)
            if resolved is None:
                return False
            if positional:
                param = catalog.first_required_string(resolved)
                if not param or len(positional) != 1:
                    return False
                kwargs = {param: positional[0], **kwargs}
            calls.append(make_call(catalog, resolved, kwargs, raw=value))
        found.extend([Found(start, end, call) for call in calls])
        return bool(calls)

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            "You can use tools. Available tools:\n"
            f"{compact_catalog(catalog)}\n\n"
            "To use a tool, reply exactly in this format and then stop:\n"
            "Thought: <why you need the tool>\n"
            "Action: <one tool name from the list>\n"
            'Action Input: <the arguments as a JSON object, e.g. {"name": "kitchen light"}>\n\n'
            'You will then receive the result as "Observation: ...". Never write an '
            "Observation yourself. When you can answer, reply:\n"
            "Thought: I can answer now.\n"
            "Final Answer: <your answer to the user>"
        )

    @override
    def stop_sequences(self) -> list[str]:
        return ["Observation:", "\nObservation", "Observation :", "\nobservation:"]

    @override
    def format_result(self, call: ToolCall, result: Any) -> str:
        return f"Observation: {result_text(result)}"

    @override
    def sanitize(self, text: str) -> str:
        return strip_react(text)


def _in_fence(text: str, pos: int) -> bool:
    """Whether ``pos`` lies inside a fenced code block."""
    if "```" not in text and "~~~" not in text:
        return False
    return any(f.body_start <= pos < f.body_end for f in find_fences(text))
