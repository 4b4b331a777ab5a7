"""Tool-call parsing speed: per-reply cost over the corpus, worst-case inputs, streaming.

Run: ``.venv/bin/python -m bench.toolcalls_bench``. Prints the median and p99
parse time of the ``auto`` chain per corpus reply (targets: median < 50 µs for
replies under 2 kB), the accuracy on the dev corpus, the engine fixtures and
the 2024-2026 families (exact calls, false positives, clean content), the time for 1 MB adversarial inputs (target < 100 ms,
i.e. no catastrophic backtracking or per-block rescans), each dialect alone on
256 kB and 1 MB of its own opening markup (time and refused calls), ``clean()`` on 1 MB of
reasoning blocks, and the streaming detector's cost per chunk and per 64 kB of
hostile stream (linear: the same per kB at any length).

In use, replies over ``guard.MAX_REPLY_CHARS`` (64,000) are refused unread;
the 1 MB figures lift that bound to measure the scans themselves, and one line
shows the bound at work. A case that raises prints ``RAISES`` (the parser must
never raise). Times are this thread's CPU time, so other load on the machine
does not skew them.
"""

from __future__ import annotations

import json
from pathlib import Path
import statistics
import sys
import time

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from custom_components.toolbelt.toolcalls import (  # noqa: E402
    Catalog,
    get_dialect,
    guard,
    resolve_dialect,
)
from custom_components.toolbelt.toolcalls.registry import detector_for  # noqa: E402
from custom_components.toolbelt.toolcalls.text.sanitize import clean  # noqa: E402
from custom_components.toolbelt.tools.definitions import ALIASES  # noqa: E402

CORPUS = ROOT / "tests" / "fixtures" / "corpus"
MB = 1_000_000


def _percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * pct))]


def bench_corpus(auto, catalog: Catalog, rounds: int = 30) -> None:
    cases = [
        json.loads(line)
        for line in (CORPUS / "dev.jsonl").read_text().splitlines()
        if line
    ]
    texts = [c["raw"] for c in cases if len(c["raw"]) < 2048]
    for text in texts:  # warm caches (name resolution, lazy imports)
        auto.parse(text, catalog)
    per_reply: list[float] = []
    for text in texts:
        samples = []
        for _ in range(rounds):
            start = time.thread_time_ns()
            auto.parse(text, catalog)
            samples.append(time.thread_time_ns() - start)
        per_reply.append(min(samples) / 1000)  # least-disturbed run (timeit-style)
    print(f"corpus replies < 2 kB: {len(texts)}")
    print(
        f"  parse (auto chain) median {statistics.median(per_reply):8.1f} µs per reply"
    )
    print(
        f"  parse (auto chain) p99    {_percentile(per_reply, 0.99):8.1f} µs per reply"
    )
    print(f"  parse (auto chain) max    {max(per_reply):8.1f} µs per reply")


ADVERSARIAL = {
    "open braces": "{" * MB,
    "open brackets": "[" * MB,
    "quotes": '"' * MB,
    "tool_call tags": "<tool_call>" * (MB // 11),
    "unclosed JSON call": '<tool_call>{"name": "HassTurnOn", "arguments": {"a": "'
    + "x" * MB,
    "nested arrays in call": "[TOOL_CALLS][" + '{"a": [' * (MB // 8),
    "ReAct lines": "Action: web_search\nAction Input: {\n" * (MB // 36),
    "think openers": "<think>" * (MB // 7),
    "fences": "```json\n{\n```\n" * (MB // 14),
    "prose": "The kitchen light is on and the porch is dark. " * (MB // 48),
    "python calls": "[HassTurnOn(name='" + "a" * MB,
    "xml params": "<tool_call><function=web_search>"
    + "<parameter=query>x" * (MB // 18),
    "harmony analysis blocks": "<|channel|>analysis<|message|>x" * (MB // 31),
    "think blocks": "<think>a</think>b" * (MB // 17),
    "fence runs": "".join("`" * k + " x\n" for k in range(3, 260)) + "x\n" * (MB // 2),
    "empty JSON lists": "[]" * (MB // 2),
    "blank lines": "\n" * MB,
}


def _repeat(block: str) -> str:
    """``block`` repeated to about 1 MB."""
    return block * max(1, MB // len(block))


LONG_INT = "9" * 4301  # one digit over Python's int-string limit
_CALL = (
    '<tool_call>{"name": "HassTurnOn", "arguments": {"name": "kitchen"}}</tool_call>'
)
_NESTED = "HassTurnOn(name=" + "[" * 600 + "]" * 600 + ")"
# Issue 10: inputs that raised or went quadratic, each grown to 1 MB.
HOSTILE = {
    "digit run + letter": '<tool_call>{"name": "HassTurnOn", "arguments": {"name": '
    + "1" * MB
    + "x}}</tool_call>",
    "4301-digit ints, JSON": _repeat(
        '<tool_call>{"name": "HassLightSet", "arguments": {"brightness": '
        + LONG_INT
        + "}}</tool_call>\n"
    ),
    "4301-digit ints, XML": _repeat(
        "<tool_call><function=HassLightSet><parameter=brightness>"
        + LONG_INT
        + "</parameter></function></tool_call>\n"
    ),
    "4301-digit ints, python": "["
    + ", ".join([f"HassLightSet(brightness={LONG_INT})"] * (MB // 4330))
    + "]",
    "[ x16000 blocks": _repeat("[" * 16_000 + "]" * 16_000 + "\n"),
    "600 nested lists, python": "[" + ", ".join([_NESTED] * (MB // 1220)) + "]",
    "functions. x1000 (reply)": "functions." * (MB // 10) + "HassTurnOn({})",
    "functions. x1000 (tags)": _repeat(
        "<tool_call>" + "functions." * 1000 + "HassTurnOn({})</tool_call>\n"
    ),
    "lone surrogates": _repeat("\ud800 " + _CALL + " \udfff\n"),
    "json5 comments": _repeat(_CALL.replace("}}", "} /* c */}") + "\n"),
    # json5's slowest input (~45 µs a character): numbers in a list.
    "json5 comment + list": _repeat(
        _CALL.replace("}}", ', "n": /* c */ [' + "1," * 200 + "]}}") + "\n"
    ),
    # Issue 23: one opener repeated (each was quadratic: seconds at 64 kB).
    "functools[ lines": _repeat("functools[\n"),
    "one line of ~": "~" * MB,
    "<function= run": _repeat("<function="),
    'unclosed {"name": in prose': _repeat('{"name": '),
    "<|python_tag|> run": _repeat("<|python_tag|>"),
    "[unused11] run": _repeat("[unused11]"),
}


def _parse_ms(dialect, text: str, catalog: Catalog) -> str:
    start = time.thread_time()
    try:
        dialect.parse(text, catalog)
    except Exception as err:  # the parser must never raise; say so if it does
        return f"RAISES {type(err).__name__}"
    return f"{(time.thread_time() - start) * 1000:8.1f} ms"


def bench_adversarial(auto, catalog: Catalog) -> None:
    limit = guard.MAX_REPLY_CHARS
    guard.MAX_REPLY_CHARS = 2 * MB  # measure the scans, not the bound
    try:
        for title, cases in (
            ("1 MB adversarial inputs (target < 100 ms each):", ADVERSARIAL),
            ("1 MB hostile inputs, issue 10 (target < 100 ms each):", HOSTILE),
        ):
            print(title)
            for label, text in cases.items():
                print(f"  {label:26s} {_parse_ms(auto, text, catalog)}")
    finally:
        guard.MAX_REPLY_CHARS = limit
    print(f"With the bound in use ({limit:,} characters):")
    print(
        f"  {'1 MB reply, refused':26s} {_parse_ms(auto, ADVERSARIAL['prose'], catalog)}"
    )
    worst, worst_label = 0.0, ""
    for label, text in {**ADVERSARIAL, **HOSTILE}.items():
        start = time.thread_time()
        auto.parse(text[:limit], catalog)
        elapsed = (time.thread_time() - start) * 1000
        if elapsed > worst:
            worst, worst_label = elapsed, label
    print(f"  {'worst input cut to bound':26s} {worst:8.1f} ms ({worst_label})")


def bench_floods(catalog: Catalog) -> None:
    """Each dialect alone on its own call opening repeated, never closed.

    The opening is the dialect's wire sample in the contract test, cut where
    the argument value starts; every dialect refuses at most 64 calls and
    then the rest at once, and the time grows with the length at most.
    """
    from tests.toolcalls.test_dialect_contract import WIRE

    limit = guard.MAX_REPLY_CHARS
    guard.MAX_REPLY_CHARS = 2 * MB
    print("each dialect on its own opening markup, 256 kB / 1 MB (refused calls):")
    try:
        for name, wire in sorted(WIRE.items()):
            opening = wire[: wire.index("kitchen light")]
            figures = []
            for size in (256_000, MB):
                text = opening * (size // len(opening))
                start = time.thread_time()
                result = get_dialect(name).parse(text, catalog)
                elapsed = (time.thread_time() - start) * 1000
                figures.append(f"{elapsed:7.1f} ms ({len(result.rejected)})")
            print(f"  {name:16s} {figures[0]}  {figures[1]}")
    finally:
        guard.MAX_REPLY_CHARS = limit


# clean() alone: in ``auto`` the gpt_oss member stops at 64 harmony blocks.
REASONING = {
    "harmony analysis": "<|channel|>analysis<|message|>x<|end|>" * (MB // 38),
    "harmony, no <|end|>": "<|channel|>analysis<|message|>x" * (MB // 31),
    "think blocks": "<think>a</think>b" * (MB // 17),
}


def bench_clean() -> None:
    print("clean() on 1 MB of reasoning blocks (target < 100 ms each):")
    for label, text in REASONING.items():
        start = time.thread_time()
        clean(text)
        elapsed = (time.thread_time() - start) * 1000
        print(f"  {label:24s} {elapsed:8.1f} ms")


def bench_detector(auto, catalog: Catalog) -> None:
    prose = (
        "The kitchen light is on, the porch is dark, and it is 21 degrees inside. " * 40
    )
    call = '<tool_call>{"name": "HassTurnOn", "arguments": {"name": "kitchen light"}}</tool_call>'
    for label, text, size in (
        ("prose", prose, 4),
        ("prose", prose, 1),
        ("call", call, 4),
    ):
        chunks = [text[i : i + size] for i in range(0, len(text), size)]
        rounds = 20
        start = time.thread_time_ns()
        for _ in range(rounds):
            detector = detector_for(auto, catalog)
            for chunk in chunks:
                detector.feed(chunk)
            detector.finish()
        per_chunk = (time.thread_time_ns() - start) / rounds / len(chunks) / 1000
        print(f"detector {label:5s} {size}-char chunks: {per_chunk:6.2f} µs per chunk")


KB64 = 64_000
# Streams that were searched from the start for every chunk (ReAct: 23 s).
STREAMS = {
    "ReAct scratchpad": (
        "react",
        "Thought: look it up\nAction: web_search\n"
        + "Action Input: a long scratchpad line\n" * (KB64 // 37),
    ),
    "ReAct one long line": ("react", "Thought: " + "x" * KB64),
    "ReAct final answer": (
        "react",
        "Thought: done\nFinal Answer: " + "The light is on. " * (KB64 // 17),
    ),
    "tag prefixes, then call": ("hermes", "a <tool_ca " * (KB64 // 11) + _CALL),
    "leading whitespace": ("hermes", " \n" * (KB64 // 2) + "Hello."),
    "line of spaces": ("hermes", "Hello.\n" + " " * KB64),
    # Openings a parser reads mid-text ([f( and {"name":) are watched everywhere.
    "brackets in prose": ("pythonic", "see [a] {b} [1] and [x y] " * (KB64 // 26)),
    "brackets never closed": ("hermes", "[{" * (KB64 // 2)),
    "bracket, then spaces": ("hermes", "Hi [" + " " * KB64),
    # A call tag with no call, then a model looping on newlines or on the tag.
    "stray tag, then newlines": ("hermes", "Done.</tool_call>" + "\n" * KB64),
    "stray tags alone on lines": (
        "hermes",
        "Done.\n" + "</tool_call>\n" * (KB64 // 13),
    ),
}


def bench_detector_hostile(catalog: Catalog) -> None:
    print("detector on 64 kB hostile streams, 4-char chunks (linear: same per kB):")
    for label, (dialect, text) in STREAMS.items():
        chunks = [text[i : i + 4] for i in range(0, len(text), 4)]
        start = time.thread_time()
        detector = detector_for(get_dialect(dialect), catalog)
        for chunk in chunks:
            detector.feed(chunk)
        detector.finish()
        elapsed = (time.thread_time() - start) * 1000 * KB64 / len(text)
        print(f"  {dialect:6s} {label:24s} {elapsed:8.1f} ms per 64 kB")


def _by_value(value):
    """Numbers compare by value (50 == 50.0); a string never equals a number."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, list):
        return [_by_value(v) for v in value]
    if isinstance(value, dict):
        return {k: _by_value(v) for k, v in value.items()}
    return value


def bench_accuracy(auto, catalog: Catalog) -> None:
    """The issue's scores: exact calls, false positives, clean content."""
    fixtures = ROOT / "tests" / "fixtures"
    for label, path in (
        ("dev corpus", CORPUS / "dev.jsonl"),
        ("engine fixtures", fixtures / "engine_misses.jsonl"),
        ("2024-2026 families", fixtures / "engine_families.jsonl"),
    ):
        cases = [json.loads(line) for line in path.read_text().splitlines() if line]
        exact = clean_content = false_pos = 0
        for case in cases:
            result = auto.parse(case["raw"], catalog)
            got = [(c.name, _by_value(c.arguments)) for c in result.calls]
            want = [(e["name"], _by_value(e["arguments"])) for e in case["expected"]]
            exact += got == want
            false_pos += bool(got) and not want
            clean_content += " ".join(result.content.split()) == " ".join(
                case["expected_content"].split()
            )
        n = len(cases)
        print(
            f"{label} ({n} cases): exact calls {100 * exact / n:.1f}%, "
            f"false positives {false_pos}, clean content {100 * clean_content / n:.1f}%"
        )


def main() -> None:
    tools = json.loads((CORPUS / "tools.json").read_text())
    # A Toolbelt agent's catalog: with the other names it gives its tools and HA's.
    catalog = Catalog.from_openai(tools, ALIASES)
    auto = resolve_dialect("auto")
    bench_corpus(auto, catalog)
    bench_accuracy(auto, catalog)
    bench_adversarial(auto, catalog)
    bench_floods(catalog)
    bench_clean()
    bench_detector(auto, catalog)
    bench_detector_hostile(catalog)


if __name__ == "__main__":
    main()
