"""Constraint cost per turn: building once, then the cached per-turn lookup.

Run: ``.venv/bin/python -m bench.constraint_bench``. Uses the corpus catalog
(26 tools, HA's and ours). The per-turn cost is the catalog fingerprint (one
``repr`` + blake2b) plus a dict lookup; building happens once per catalog.
Times are this thread's CPU time, so other load on the machine does not skew them.
"""

from __future__ import annotations

import json
from pathlib import Path
import statistics
import sys
import time

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from custom_components.toolbelt.toolcalls import Catalog  # noqa: E402
from custom_components.toolbelt.toolcalls.prompting import constraint  # noqa: E402
from custom_components.toolbelt.toolcalls.prompting.constraint import Shape  # noqa: E402

TOOLS = json.loads((ROOT / "tests" / "fixtures" / "corpus" / "tools.json").read_text())


def _median_us(func, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.thread_time_ns()
        func()
        times.append(time.thread_time_ns() - start)
    return statistics.median(times) / 1000


def main() -> None:
    catalog = Catalog.from_openai(TOOLS)

    def cold_gbnf() -> None:
        constraint._cache.clear()
        constraint.gbnf(catalog, Shape.ANSWER_OR_CALL)

    def cold_schema() -> None:
        constraint._cache.clear()
        constraint.json_schema(catalog, Shape.ANSWER_OR_CALL)

    def turn() -> None:
        # What a turn pays: a fresh catalog's fingerprint, then the cached lookup.
        key = constraint.fingerprint(catalog)
        constraint.gbnf(catalog, Shape.ANY_CALL, key=key)
        constraint.gbnf(catalog, Shape.ANSWER_OR_CALL, key=key)

    print(f"tools in catalog: {len(catalog)}")
    print(f"build GBNF (uncached):        {_median_us(cold_gbnf, 200):8.1f} µs")
    print(f"build JSON schema (uncached): {_median_us(cold_schema, 200):8.1f} µs")
    constraint.gbnf(catalog, Shape.ANY_CALL)
    print(
        f"per turn (fingerprint + 2 cached lookups): {_median_us(turn, 2000):6.1f} µs"
    )


if __name__ == "__main__":
    main()
