"""A scriptable OpenAI-compatible model server for trying Toolbelt without a model.

It offers four models, each writing its tool calls the way a family of real
models does, so every path of Toolbelt can be tried in the UI:

- ``stub-hermes`` writes ``<tool_call>{"name": …, "arguments": …}</tool_call>``
  as text (Hermes, Qwen and their fine-tunes);
- ``stub-react`` writes ReAct ``Thought:`` / ``Action:`` / ``Action Input:`` lines;
- ``stub-native`` returns structured ``tool_calls`` when the request sends tools
  (and honours ``tool_choice``), as llama.cpp, vLLM or OpenAI do;
- ``stub-chat`` never calls a tool: it answers in plain text, and claims a device
  command is done although nothing was run (a small model's typical failure).

The calling models turn the user's words into a plausible call for the demo
devices of the dev instance: "turn on the kitchen light" is ``HassTurnOn``,
"set the living room lamp to 40%" ``HassLightSet``, "set the living room blinds
to 30%" ``HassSetPosition``, "set the thermostat to 22 degrees"
``HassClimateSetTemperature``, "what is the temperature in the living room"
``GetLiveContext`` (see ``understand``). After the tool result they answer
"Done." (or say the call failed); anything else gets ``GREETING``. A JSON-schema
``response_format`` is honoured by every calling model (the bare call object),
``tool_choice`` by ``stub-native``; a GBNF ``grammar`` is ignored.

``script/develop`` starts it with ``TOOLBELT_STUB_SERVER=1`` (see the README);
``script/develop_check --stub-server`` checks Toolbelt through it. Alone:
``python script/dev_stub_server.py --port 8124``.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable
import contextlib
from dataclasses import dataclass
import itertools
import json
import re
import time
from typing import Any

from aiohttp import web

GREETING = "Hello from the stub model server."
MODELS = {
    "stub-hermes": "hermes",
    "stub-react": "react",
    "stub-native": "native",
    "stub-chat": "chat",
}
DEFAULT_MODEL = "stub-hermes"
_ids = itertools.count(1)


@dataclass(frozen=True)
class Intent:
    """A call the words ask for: an HA intent (bare name) and its arguments."""

    name: str
    arguments: dict[str, Any]
    claim: str  # what stub-chat says instead of calling


def _target(words: str) -> str:
    return re.sub(r"^(the|my)\s+", "", words.strip(" .!?"), flags=re.I)


def _number(text: str) -> int | float:
    value = float(text)
    return int(value) if value.is_integer() else value


COVERS = re.compile(r"blind|cover|curtain|shade|shutter|garage|door\b", re.I)

# (pattern on the user's words, what it means); the first match wins.
UNDERSTANDING: list[tuple[re.Pattern[str], Callable[[re.Match[str]], Intent]]] = [
    (
        re.compile(r"turn (on|off) (?:all )?the lights in the (.+)", re.I),
        lambda m: Intent(
            f"HassTurn{m[1].capitalize()}",
            {"area": _target(m[2]), "domain": ["light"]},
            f"The lights in the {_target(m[2])} are {m[1]} now.",
        ),
    ),
    (
        re.compile(r"turn (on|off) (.+)", re.I),
        lambda m: Intent(
            f"HassTurn{m[1].capitalize()}",
            {"name": _target(m[2])},
            f"The {_target(m[2])} should be {m[1]} now.",
        ),
    ),
    (
        re.compile(r"\b(open|close|lock|unlock) (.+)", re.I),
        lambda m: Intent(
            "HassTurnOn" if m[1].lower() in ("open", "lock") else "HassTurnOff",
            {"name": _target(m[2])},
            f"The {_target(m[2])} is {m[1].lower().rstrip('e')}ed now.",
        ),
    ),
    (
        re.compile(r"set (.+?) to ([\d.]+) ?(?:degrees|°)", re.I),
        lambda m: Intent(
            "HassClimateSetTemperature",
            {"name": _target(m[1]), "temperature": _number(m[2])},
            f"The {_target(m[1])} is set to {m[2]} degrees.",
        ),
    ),
    (
        re.compile(r"set (.+?) (?:brightness |position )?to (\d+) ?%", re.I),
        lambda m: (
            Intent(
                "HassSetPosition",
                {"name": _target(m[1]), "position": int(m[2])},
                f"The {_target(m[1])} are at {m[2]}% now.",
            )
            if COVERS.search(m[1])
            else Intent(
                "HassLightSet",
                {
                    "name": _target(m[1].removesuffix(" brightness")),
                    "brightness": int(m[2]),
                },
                f"The {_target(m[1])} is at {m[2]}% now.",
            )
        ),
    ),
    (
        re.compile(r"\b(what|how)\b.*\b(temperature|warm|cold|on|off|open)\b", re.I),
        lambda m: Intent("GetLiveContext", {}, "It is 20 degrees."),
    ),
]


def understand(words: str) -> Intent | None:
    """The call a user's sentence asks for, or None (then the model chats)."""
    for pattern, meaning in UNDERSTANDING:
        if match := pattern.search(words):
            return meaning(match)
    return None


# ---- reading a request -------------------------------------------------------


def _text(content: Any) -> str:
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


# A call in an assistant message: in its own words, or as Toolbelt writes a
# structured call back when the server takes no tool role ("[called …]").
CALL_MARKERS = ("<tool_call>", "Action:", '"arguments"', "[called ")


def _made_a_call(message: dict[str, Any]) -> bool:
    return bool(message.get("tool_calls")) or any(
        marker in _text(message.get("content")) for marker in CALL_MARKERS
    )


def _after_a_call(messages: list[dict[str, Any]]) -> bool:
    """The last assistant message made a call, and only its results follow."""
    for message in reversed(messages):
        if message.get("role") == "assistant":
            return _made_a_call(message)
    return False


def _tool_names(body: dict[str, Any]) -> list[str]:
    """The names the request offers: its tools, else those its prompt lists."""
    names = [t["function"]["name"] for t in body.get("tools") or [] if "function" in t]
    if names:
        return names
    prompt = " ".join(
        _text(m.get("content")) for m in body["messages"] if m.get("role") == "system"
    )
    found = re.findall(r"\b((?:\w+?__)*(?:Hass[A-Z]\w*|GetLiveContext))\b", prompt)
    return list(dict.fromkeys(found))


def _name_for(bare: str, names: list[str]) -> str:
    """The request's own name for an intent (``intent__HassTurnOn`` on new HAs)."""
    return next((n for n in names if n.rpartition("__")[2] == bare), bare)


def _forced_tool(body: dict[str, Any], names: list[str]) -> str | None:
    """The tool a tool_choice or a JSON schema forces, if any."""
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        return choice.get("function", {}).get("name")
    if choice == "required" and names:
        return names[0]
    return None


def _schema(body: dict[str, Any]) -> dict[str, Any] | None:
    response_format = body.get("response_format") or {}
    if response_format.get("type") != "json_schema":
        return None
    return (response_format.get("json_schema") or {}).get("schema") or {}


def _probe_arguments(tool: str, body: dict[str, Any]) -> dict[str, Any]:
    """Arguments for a call the server was told to force (the agent check)."""
    for spec in body.get("tools") or []:
        if spec.get("function", {}).get("name") == tool:
            if "name" in spec["function"].get("parameters", {}).get("properties", {}):
                return {"name": "kitchen light"}
            return {}
    return {"name": "kitchen light"}


@dataclass
class Reply:
    """One answer: text, or structured calls."""

    content: str = ""
    tool_calls: list[dict[str, Any]] | None = None


def _structured(name: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "id": f"call_stub_{next(_ids)}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }
    ]


def _as_text(style: str, name: str, arguments: dict[str, Any], why: str) -> str:
    call = json.dumps({"name": name, "arguments": arguments})
    if style == "react":
        return f"Thought: {why}\nAction: {name}\nAction Input: {json.dumps(arguments)}"
    return f"<tool_call>\n{call}\n</tool_call>"


def _final(style: str, messages: list[dict[str, Any]]) -> str:
    """The answer after the tool results: done, failed, or what was read."""
    last_call = next(m for m in reversed(messages) if m.get("role") == "assistant")
    results = " ".join(
        _text(m.get("content")) for m in messages[messages.index(last_call) + 1 :]
    )
    if re.search(r'ERROR|"success":\s*false|"failed":\s*\[\{', results):
        answer = "Sorry, that did not work."
    elif "GetLiveContext" in json.dumps(last_call):
        found = re.search(
            r"temperature.*?(?:state|current_temperature)\W+([\d.]+)",
            results,
            re.S | re.I,
        )
        answer = (
            f"It is {found[1]} degrees in the living room."
            if found
            else "I checked, but Home Assistant did not say."
        )
    else:
        answer = "Done."
    return f"Final Answer: {answer}" if style == "react" else answer


def decide(body: dict[str, Any]) -> Reply:
    """What the requested model answers to this request."""
    style = MODELS[body["model"]]
    messages = body["messages"]
    names = _tool_names(body)
    schema = _schema(body)
    native = style == "native" and bool(body.get("tools"))

    if style != "chat" and (forced := _forced_tool(body, names) if native else None):
        return Reply(tool_calls=_structured(forced, _probe_arguments(forced, body)))

    if style != "chat" and _after_a_call(messages):
        text = _final(style, messages)
        if schema is not None and "answer" in json.dumps(schema):
            return Reply(json.dumps({"answer": text}))
        return Reply(text)

    user = next(
        (
            _text(m.get("content"))
            for m in reversed(messages)
            if m.get("role") == "user"
        ),
        "",
    )
    intent = understand(user)
    if schema is not None and style != "chat":
        # A JSON schema forces the bare call object (the check asks for one).
        name = _name_for(intent.name, names) if intent else (names or ["HassTurnOn"])[0]
        arguments = intent.arguments if intent else _probe_arguments(name, body)
        return Reply(json.dumps({"name": name, "arguments": arguments}))
    if intent is None:
        return Reply(GREETING)
    if style == "chat":
        return Reply(intent.claim)
    name = _name_for(intent.name, names)
    if native:
        return Reply(tool_calls=_structured(name, intent.arguments))
    return Reply(_as_text(style, name, intent.arguments, f"The user said: {user}"))


# ---- the HTTP server ---------------------------------------------------------


async def _models(_: web.Request) -> web.Response:
    return web.json_response(
        {
            "object": "list",
            "data": [
                {"id": model, "object": "model", "owned_by": "toolbelt-stub"}
                for model in MODELS
            ],
        }
    )


def _error(status: int, message: str) -> web.Response:
    return web.json_response(
        {"error": {"message": message, "type": "invalid_request_error"}},
        status=status,
    )


async def _chat(request: web.Request) -> web.StreamResponse:
    try:
        body = await request.json()
        body["messages"]
    except (ValueError, KeyError, TypeError):
        return _error(400, "a chat request needs a JSON body with messages")
    if body.get("model") not in MODELS:
        return _error(
            404, f"model {body.get('model')!r} not found; try {DEFAULT_MODEL}"
        )
    reply = decide(body)
    finish = "tool_calls" if reply.tool_calls else "stop"
    head = {
        "id": f"chatcmpl-stub-{next(_ids)}",
        "created": int(time.time()),
        "model": body["model"],
    }
    if not body.get("stream"):
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = reply.tool_calls
        return web.json_response(
            {
                **head,
                "object": "chat.completion",
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            }
        )
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    # Text in a few pieces, as a server streams it.
    words = re.findall(r"\S+\s*|\s+", reply.content)
    deltas += [{"content": "".join(words[i : i + 4])} for i in range(0, len(words), 4)]
    if reply.tool_calls:
        deltas.append(
            {"tool_calls": [{"index": i, **c} for i, c in enumerate(reply.tool_calls)]}
        )
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    for index, delta in enumerate([*deltas, {}]):
        last = index == len(deltas)
        chunk = {
            **head,
            "object": "chat.completion.chunk",
            "choices": [
                {"index": 0, "delta": delta, "finish_reason": finish if last else None}
            ],
        }
        await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
    await response.write(b"data: [DONE]\n\n")
    return response


def stub_app() -> web.Application:
    """The stub's routes: the model list and chat completions."""
    app = web.Application()
    app.router.add_get("/v1/models", _models)
    app.router.add_post("/v1/chat/completions", _chat)
    return app


async def start_stub_server(
    port: int = 0, host: str = "127.0.0.1"
) -> tuple[web.AppRunner, str]:
    """Serve the stub on host:port (0: any free port); return it and its base URL."""
    runner = web.AppRunner(stub_app(), access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host, port, reuse_address=True).start()
    return runner, f"http://{host}:{runner.addresses[0][1]}/v1"


async def _serve(port: int) -> None:
    runner, url = await start_stub_server(port)
    print(f"stub model server at {url} (models: {', '.join(MODELS)})", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8124)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(parser.parse_args().port))
