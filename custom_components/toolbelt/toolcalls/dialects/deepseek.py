"""DeepSeek R1/V3/V3.1 (fullwidth ``<｜tool▁…｜>`` tokens) and V3.2/V4 DSML.

* R1/V3: ``<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>fn
  ```json {..} ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>``; R1 distills may
  write ``<｜tool▁calls｜>`` and drop the per-call begin token.
* V3.1: ``<｜tool▁call▁begin｜>fn<｜tool▁sep｜>{..}<｜tool▁call▁end｜>``.
* V3.2/V4: ``<｜DSML｜function_calls>`` (or ``tool_calls``) with
  ``<｜DSML｜invoke name="fn">`` and ``<｜DSML｜parameter name="k" string="true">v``;
  V4.1 puts a space after the token: ``<｜DSML｜ calls>``, ``<｜DSML｜ invoke ..>``.
* StepFun Step-3 writes the same tokens (``_`` for ``▁``) around a steptml
  invoke: ``<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke
  name="fn"><steptml:parameter name="k">v</steptml:parameter></steptml:invoke>``,
  sometimes with the name on a line of its own before the invoke, or with no
  ``function<｜tool_sep｜>`` at all.

The tokens are matched loosely: ``|`` for ``｜`` and ``_`` for ``▁`` (what a
server without the special tokens, or a copy-paste, produces). Reasoning is
``<think>`` or a lone ``</think>``; calls quoted inside it only count when
there is no call after it.
"""

from __future__ import annotations

from dataclasses import dataclass
import json
import re
from typing import TYPE_CHECKING, Any, override

from ..model import RejectedCall, ToolCall
from ..prompting.render import json_catalog
from ..reading.calls import Found, build_result, make_call
from ..reading.jsonrepair import (
    LooseJSONError,
    TruncatedJSONError,
    loads_loose,
)
from ..reading.markup import (
    Finder,
    prefer_outside_reasoning,
    too_many,
    typed_text_arguments,
)
from .base import Dialect

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..model import ParseResult

__all__ = ["DeepSeekDialect", "InvokeMarkup", "invoke_calls"]


def _token(words: str) -> str:
    """Regex for ``<｜tool▁calls▁begin｜>`` that also accepts ASCII look-alikes."""
    inner = r"[▁_ ]".join(re.escape(w) for w in words.split())
    return r"<[｜|]\s*" + inner + r"\s*[｜|]>"


_CALLS_BEGIN = re.compile(_token("tool calls begin") + "|" + _token("tool calls"))
_CALLS_END = re.compile(_token("tool calls end"))
_CALL_BEGIN = re.compile(_token("tool call begin"))
_CALL_END = re.compile(_token("tool call end"))
_SEP = re.compile(_token("tool sep"))
_ANY_TOKEN = re.compile(r"<[｜|]\s*tool[▁_ ][^<>｜|]{0,30}[｜|]>")
# A tool's output the model wrote itself after its call (Cogito, as Ollama's
# test shows): neither a call nor an answer, cut whole.
_OUTPUTS = re.compile(
    r"<[｜|]\s*tool[▁_ ]outputs[▁_ ]begin[｜|]>.*?"
    r"(?:<[｜|]\s*tool[▁_ ]outputs[▁_ ]end[｜|]>|\Z)",
    re.S,
)


@dataclass(frozen=True, slots=True)
class InvokeMarkup:
    """DSML's tags under one word: DeepSeek's ``DSML``, GigaChat 3.5's ``GCML``."""

    block: re.Pattern[str]
    invoke: re.Pattern[str]
    param: re.Pattern[str]
    word: str

    @classmethod
    def of(cls, word: str) -> InvokeMarkup:
        """The tags ``<｜WORD｜tool_calls>``, ``<｜WORD｜invoke name=..>``, ...;
        V4.1 writes a space after the word's token (``<｜DSML｜ calls>``), and
        a block's closers follow its opener's spelling."""
        return cls(
            re.compile(rf"<｜{word}｜( ?)(function_calls|tool_calls|(?<= )calls)>"),
            re.compile(rf'<｜{word}｜ ?invoke\s+name="([^"]+)"\s*>'),
            re.compile(
                rf'<｜{word}｜ ?parameter\s+name="([^"]+)"(?:\s+string="(true|false)")?\s*>'
            ),
            word,
        )


_DSML = InvokeMarkup.of("DSML")

_STEPTML_INVOKE = re.compile(r'<steptml:invoke\s+name="([^"]+)"\s*>')
_NAME_LINE = re.compile(r"\s*(?:[A-Za-z_][\w.\-]*+\s*)?")
_STEPTML_PARAM = re.compile(r'<steptml:parameter\s+name="([^"]+)"\s*>')


def _arguments(body: str) -> str:
    """The JSON text, without the ```json fence R1/V3 put around it."""
    text = body.strip()
    if text.startswith("```"):
        # A fence that never closes was cut off with its JSON.
        closed = text.endswith("```") and len(text) >= 6
        text = text[3:-3] if closed else text[3:]
        if text.startswith("json"):
            text = text[4:]
    return text.strip()


def _tag_params(
    body: str, opener: re.Pattern[str], closer: str
) -> list[tuple[str, str, bool]] | None:
    """``(name, text, string="true")`` per parameter; None if one never closes."""
    opens = list(opener.finditer(body))
    params: list[tuple[str, str, bool]] = []
    for index, param in enumerate(opens):
        limit = opens[index + 1].start() if index + 1 < len(opens) else len(body)
        close = body.rfind(closer, param.end(), limit)
        if close < 0:
            return None
        string = opener.groups > 1 and param.group(2) == "true"
        params.append((param.group(1), body[param.end() : close], string))
    return params


def _invoke_call(
    catalog: Catalog,
    name: str,
    body: str,
    raw: str,
    opener: re.Pattern[str],
    closer: str,
) -> ToolCall | RejectedCall:
    """An invoke's call from its parameter tags (typed from the schema) or JSON body."""
    params = _tag_params(body, opener, closer)
    if params is None:
        return RejectedCall(name, raw, "a parameter is never closed")
    if params and (inner := _wrapped_arguments(catalog, name, params)) is not None:
        return make_call(catalog, name, inner, raw=raw)
    if params:
        args = typed_text_arguments(catalog, name, [(k, v) for k, v, _ in params])
        for key, value, is_string in params:
            if is_string:
                args[key.strip()] = value
            elif (text_value := _json_string(value)) is not None:
                args[key.strip()] = text_value  # string="false": JSON
        return make_call(catalog, name, args, raw=raw, coerce=True)
    if body.strip():
        try:
            return make_call(catalog, name, loads_loose(body.strip()), raw=raw)
        except LooseJSONError as err:
            return RejectedCall(name, raw, f"arguments are not JSON: {err}")
    return make_call(catalog, name, {}, raw=raw)


def _wrapped_arguments(
    catalog: Catalog, name: str, params: list[tuple[str, str, bool]]
) -> dict[str, Any] | None:
    """The real arguments when the only parameter is an ``arguments`` or
    ``input`` wrapper holding them as a JSON object (vLLM's DeepSeek V3.2
    parser unwraps it): only for a tool with no parameter of that name, and
    an object whose keys are all the tool's parameters. Else None."""
    if len(params) != 1 or params[0][0].strip() not in _WRAPPERS:
        return None
    resolved = catalog.resolve(name)
    schema = catalog.schema(resolved) if resolved else {}
    props = schema.get("properties") if isinstance(schema, dict) else None
    value = params[0][1].strip()
    if not isinstance(props, dict) or params[0][0].strip() in props:
        return None
    if not value.startswith("{"):
        return None
    try:
        inner = json.loads(value)
    except ValueError:
        return None
    if not isinstance(inner, dict) or not inner or not set(inner) <= set(props):
        return None
    return inner


_WRAPPERS = frozenset(("arguments", "input"))


def _json_string(value: str) -> str | None:
    """The text of a JSON string literal (``"hello"``), else None."""
    value = value.strip()
    if len(value) < 2 or value[0] != '"':
        return None
    try:
        decoded = json.loads(value)
    except ValueError:
        return None
    return decoded if isinstance(decoded, str) else None


def invoke_calls(text: str, catalog: Catalog, tags: InvokeMarkup) -> list[Found]:
    """The calls of every ``<｜WORD｜tool_calls>`` block, a block cut off refused."""
    found: list[Found] = []
    finder = Finder(text)
    for block in tags.block.finditer(text):
        if too_many(found, text, block.start()):
            break
        token = f"</｜{tags.word}｜{block.group(1)}"  # a closer's start
        closer = f"{token}{block.group(2)}>"
        close = finder.find(closer, block.end())
        block_end = close + len(closer) if close >= 0 else len(text)
        body_end = close if close >= 0 else len(text)
        invokes = list(tags.invoke.finditer(text, block.end(), body_end))
        if not invokes:  # a block that names no call is still no reply text
            found.append(Found(block.start(), block_end, None))
        for index, inv in enumerate(invokes):
            if too_many(found, text, inv.start()):
                break
            limit = invokes[index + 1].start() if index + 1 < len(invokes) else body_end
            inv_close = text.find(f"{token}invoke>", inv.end(), limit)
            raw = text[inv.start() : limit]
            name = inv.group(1)
            call: ToolCall | RejectedCall
            if inv_close < 0:
                call = RejectedCall(name, raw, "call is truncated")
            else:
                body = text[inv.end() : inv_close]
                call = _invoke_call(
                    catalog, name, body, raw, tags.param, f"{token}parameter>"
                )
            found.append(Found(block.start(), block_end, call))
    return found


def _steptml_call(
    catalog: Catalog, body: str, raw: str
) -> ToolCall | RejectedCall | None:
    """Step-3's invoke, when ``body`` is one (after an optional name line)."""
    invoke = _STEPTML_INVOKE.search(body)
    if invoke is None or not _NAME_LINE.fullmatch(body, 0, invoke.start()):
        return None
    close = body.find("</steptml:invoke>", invoke.end())
    if close < 0:
        return RejectedCall(invoke.group(1), raw, "call is truncated")
    return _invoke_call(
        catalog,
        invoke.group(1),
        body[invoke.end() : close],
        raw,
        _STEPTML_PARAM,
        "</steptml:parameter>",
    )


def _one_call(catalog: Catalog, body: str, raw: str) -> ToolCall | RejectedCall | None:
    """``function<sep>name\\n```json…```'' or ``name<sep>{json}``; None if no separator."""
    sep = _SEP.search(body)
    if sep is None:
        return _steptml_call(catalog, body, raw) if "<steptml:" in body else None
    left, right = body[: sep.start()].strip(), body[sep.end() :]
    if left in ("", "function") and "<steptml:" in right:
        step = _steptml_call(catalog, right, raw)
        if step is not None:
            return step
    if left in ("", "function"):
        line_end = right.find("\n")
        if line_end < 0:
            name, args_text = right.strip(), ""
        else:
            name, args_text = right[:line_end].strip(), right[line_end + 1 :]
        if "{" in name:  # "function<sep>name{...}" on one line
            brace = name.index("{")
            name, args_text = name[:brace].strip(), name[brace:] + "\n" + args_text
    else:
        name, args_text = left, right
    args_text = _arguments(args_text)
    if not args_text:
        return make_call(catalog, name, {}, raw=raw)
    try:
        args = loads_loose(args_text)
    except TruncatedJSONError:
        return RejectedCall(name=name, raw=raw, reason="arguments are truncated")
    except LooseJSONError as err:
        return RejectedCall(name=name, raw=raw, reason=f"arguments are not JSON: {err}")
    return make_call(catalog, name, args, raw=raw)


class DeepSeekDialect(Dialect):
    """DeepSeek tool-call tokens (R1, V3, V3.1) and DSML (V3.2, V4)."""

    name = "deepseek"
    markers = (
        "<｜tool▁calls▁begin｜>",
        "<｜tool▁calls｜>",
        "<｜tool▁call▁begin｜>",
        "<｜DSML｜function_calls>",
        "<｜DSML｜tool_calls>",
        "<｜DSML｜ calls>",
        "<|tool▁calls▁begin|>",
        "<|tool_calls_begin|>",
        "<｜tool_calls_begin｜>",
        "<｜tool_call_begin｜>",
        "<｜tool▁outputs▁begin｜>",
    )
    triggers = ("tool▁", "DSML", "tool_sep", "tool_calls_begin", "tool_call_begin")
    cleans = ("tool",)

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            "## Tools\nYou have access to these tools, described as JSON signatures:\n"
            f"{json_catalog(catalog)}\n\n"
            "To call tools, ALWAYS use this exact format:\n"
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>tool_name<｜tool▁sep｜>"
            '{"arg": "value"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>\n'
            "If no tool is needed, answer normally."
        )

    def stop_sequences(self) -> list[str]:
        """Stop after the call block; the parser needs no closer."""
        return ["<｜tool▁calls▁end｜>"]

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        found = self._token_calls(text, catalog)
        if "DSML" in text:
            found += invoke_calls(text, catalog, _DSML)
        found = prefer_outside_reasoning(text, found)
        return build_result(text, found, self.name, sanitize=self.sanitize)

    def _token_calls(self, text: str, catalog: Catalog) -> list[Found]:
        found: list[Found] = []
        if "tool" not in text:
            return found
        begins = list(_CALL_BEGIN.finditer(text))
        if begins:
            for index, match in enumerate(begins):
                if too_many(found, text, match.start()):
                    break
                limit = (
                    begins[index + 1].start() if index + 1 < len(begins) else len(text)
                )
                end_tok = _CALL_END.search(text, match.end(), limit)
                calls_end = _CALLS_END.search(text, match.end(), limit)
                stop = (
                    min(m.start() for m in (end_tok, calls_end) if m is not None)
                    if (end_tok or calls_end)
                    else limit
                )
                end = (
                    end_tok.end()
                    if end_tok is not None and end_tok.start() == stop
                    else stop
                )
                call = _one_call(
                    catalog, text[match.end() : stop], text[match.start() : end]
                )
                if call is not None:  # no separator: not a DeepSeek call
                    found.append(Found(match.start(), end, call))
        else:
            # "<｜tool▁calls｜>function<｜tool▁sep｜>..." with no per-call begin token.
            starts = list(_CALLS_BEGIN.finditer(text))
            for index, match in enumerate(starts):
                if too_many(found, text, match.start()):
                    break
                limit = (
                    starts[index + 1].start() if index + 1 < len(starts) else len(text)
                )
                stop_m = _CALL_END.search(
                    text, match.end(), limit
                ) or _CALLS_END.search(text, match.end(), limit)
                stop = stop_m.start() if stop_m else limit
                end = stop_m.end() if stop_m else limit
                call = _one_call(
                    catalog, text[match.end() : stop], text[match.start() : end]
                )
                if call is not None:
                    found.append(Found(match.start(), end, call))
        if not found:
            return found
        # The wrapper tokens carry no call but are cut with the calls.
        for pattern in (_CALLS_BEGIN, _CALLS_END):
            found.extend(
                Found(m.start(), m.end(), None) for m in pattern.finditer(text)
            )
        return found

    @override
    def sanitize(self, text: str) -> str:
        if "tool" in text:
            if "outputs" in text:
                text = _OUTPUTS.sub("", text)
            text = _ANY_TOKEN.sub("", text)
        return text
