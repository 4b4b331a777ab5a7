"""Tool-call parsing speed through the command line, as a user of the CLI sees it.

Run: ``.venv/bin/python -m bench.cli_bench``. Feeds every reply of the
fixtures (``tests/fixtures/corpus/dev.jsonl``, ``engine_misses.jsonl`` and
``engine_families.jsonl``) ``--repeat`` times over (default 20) as JSON lines
to ``python -m custom_components.toolbelt.toolcalls tools.json`` and prints the
cost per reply with the start-up of a one-line run subtracted:
``(cost(N lines) - cost(1 line)) / (N - 1)``. Costs are CPU time (user +
system), the median of ``--runs`` runs (default 5), so other load on the
machine skews them less than wall time would. The child reads its own CPU
clock once its imports are done and again when it has answered the last line
(each program below runs under ``_TIMED``), so the cost of importing Python
and the parser, which varies by a tenth of a second from run to run on a busy
machine (±20 µs on the per-reply figure of a 20-times run), stays out of both
costs. The answering itself still varies by about ±25% run to run on a shared
virtual machine, and the machine's speed drifts from one minute to the next:
each run measures every row in turn, so the rows' figures (and their ratios)
come from the same minutes. The spread of the runs is printed.

Lines printed:

- ``toolbelt``: the CLI as it is, over the old set (the dev corpus and the
  engine misses) and over every fixture;
- ``toolbelt, chain without the issue-23 dialects``: the same CLI with the
  families added by issue 23 taken out of the ``auto`` chain, so the cost of
  adding them shows;
- ``--repo DIR``: the CLI of another checkout (``git worktree add /tmp/base
  main``) on the same lines, for a before/after figure, with toolbelt's cost
  as a share of it;
- ``--peer DIR``: the EdgeVox tool-parser chain
  (``edgevox.llm.llamacpp.parse_tool_calls_from_content`` with every detector
  of ``edgevox.llm.tool_parsers.DETECTORS``) driven the same way, from a
  checkout of nrl-ai/edgevox (``--peer-path`` adds a directory holding its
  ``partial_json_parser`` dependency). Nothing of it is part of this repository.

``--instructions`` counts the child's user-space instructions instead of its
CPU time (under ``valgrind --tool=cachegrind``, which must be installed):
one run each, and the same figure however busy the machine is, so it is the
figure to compare two checkouts by on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
TOOLS = FIXTURES / "corpus" / "tools.json"
OLD_SET = (FIXTURES / "corpus" / "dev.jsonl", FIXTURES / "engine_misses.jsonl")
NEW_SET = (FIXTURES / "engine_families.jsonl",)
# The families issue 23 added to the ``auto`` chain.
ISSUE_23_DIALECTS = (
    "olmo3",
    "minicpm",
    "apriel",
    "longcat",
    "internlm",
    "gigachat",
    "hy",
    "dots",
    "pangu",
    "plamo",
    "solar_open",
    "k2_horizon",
    "inkling",
    "muse",
)

# The CLI as ``python -m`` runs it: ``run()`` answers stdin.
CLI = """
import io, sys
from custom_components.toolbelt.toolcalls.__main__ import main
if isinstance(sys.stdin, io.TextIOWrapper):
    sys.stdin.reconfigure(errors="replace")
def run():
    return main(sys.argv[1:2], sys.stdin, sys.stdout, sys.stderr)
"""

_WITHOUT = """
import sys
from custom_components.toolbelt.toolcalls import registry
from custom_components.toolbelt.toolcalls.__main__ import main
left_out = set(sys.argv[2].split(","))
every = registry.auto_names
registry.auto_names = lambda: tuple(n for n in every() if n not in left_out)
def run():
    return main(sys.argv[1:2], sys.stdin, sys.stdout, sys.stderr)
"""

# Runs a program's ``run()`` between two readings of the process's CPU clock
# and writes the difference (seconds) to the file named by the last argument.
_TIMED = """
import sys, time
_out = sys.argv.pop()
{program}
_start = time.process_time()
_code = run()
sys.stdout.flush()
_spent = time.process_time() - _start
with open(_out, "w", encoding="utf-8") as _handle:
    _handle.write(repr(_spent))
sys.exit(_code)
"""

# Drives the peer chain the way the CLI drives ours: JSON lines in, JSON lines out.
_PEER = """
import json, sys
from edgevox.llm.llamacpp import parse_tool_calls_from_content
from edgevox.llm.tool_parsers import DETECTORS
def run():
    with open(sys.argv[1], encoding="utf-8") as handle:
        tools = json.load(handle)
    names = {t["function"]["name"] for t in tools}
    detectors = tuple(DETECTORS)
    for line in sys.stdin:
        if not line.strip():
            continue
        text = json.loads(line)["text"]
        calls, content, _ = parse_tool_calls_from_content(
            text, preset_parsers=detectors, known_tools=names, tool_schemas=tools
        )
        sys.stdout.write(json.dumps({"calls": calls, "content": content}) + "\\n")
        sys.stdout.flush()
"""


def replies(paths: tuple[Path, ...]) -> list[str]:
    """Every reply of the fixture files that exist, as CLI input lines."""
    lines: list[str] = []
    for path in paths:
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                lines.append(json.dumps({"text": json.loads(line)["raw"]}))
    return lines


_VALGRIND = ["valgrind", "--tool=cachegrind", "--cache-sim=no"]
_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def _cost(
    program: str,
    args: list[str],
    lines: list[str],
    cwd: Path,
    env: dict[str, str],
    *,
    instructions: bool = False,
) -> float:
    """CPU seconds the child's ``run()`` spends answering ``lines``, or with
    ``instructions`` the user-space instructions the whole child runs."""
    with (
        tempfile.TemporaryFile("w+", encoding="utf-8") as feed,
        tempfile.TemporaryDirectory() as out,
    ):
        feed.write("\n".join(lines) + "\n")
        feed.seek(0)
        log, spent = Path(out) / "log", Path(out) / "spent"
        if instructions:
            argv = [
                *_VALGRIND,
                f"--cachegrind-out-file={Path(out) / 'cg'}",
                f"--log-file={log}",
                sys.executable,
                "-c",
                program + "\nsys.exit(run())\n",
                *args,
            ]
        else:
            timed = _TIMED.format(program=program)
            argv = [sys.executable, "-c", timed, *args, str(spent)]
        proc = subprocess.run(
            argv,
            stdin=feed,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=cwd,
            env=env,
            check=False,
        )
        if proc.returncode != 0:
            raise SystemExit(f"{args[:1]} failed in {cwd}")
        if not instructions:
            return float(spent.read_text(encoding="utf-8"))
        found = _REFS.search(log.read_text(encoding="utf-8"))
        if found is None:
            raise SystemExit("valgrind printed no instruction count")
        return float(found.group(1).replace(",", ""))


def per_reply_runs(
    program: str,
    lines: list[str],
    *,
    repeat: int,
    runs: int,
    args: tuple[str, ...] = (),
    cwd: Path = ROOT,
    path: str = "",
    instructions: bool = False,
) -> list[float]:
    """Per reply, each run: ``lines`` ``repeat`` times over, a one-line run
    subtracted.

    ``program`` defines ``run()``, which answers stdin (``CLI``, the parser
    CLI); ``args`` follow the tools file on its command line. µs of CPU time,
    or thousands of instructions with ``instructions``.
    """
    env = dict(os.environ, PYTHONPATH=path) if path else dict(os.environ)
    env["PYTHONHASHSEED"] = "0"  # the same string hashes, run after run
    argv = [str(TOOLS), *args]
    fed = lines * repeat
    unit = 1e-3 if instructions else 1e6
    figures = []
    for _ in range(runs):
        one = _cost(program, argv, lines[:1], cwd, env, instructions=instructions)
        full = _cost(program, argv, fed, cwd, env, instructions=instructions)
        figures.append((full - one) / (len(fed) - 1) * unit)
    return figures


def main() -> None:
    """Print the CLI's cost per reply (and the peer's, with ``--peer``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--repo", type=Path, help="another checkout to compare")
    parser.add_argument("--peer", type=Path, help="a checkout of nrl-ai/edgevox")
    parser.add_argument("--peer-path", default="", help="extra PYTHONPATH for it")
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count instructions under valgrind instead of CPU time (one run)",
    )
    args = parser.parse_args()
    runs = 1 if args.instructions else args.runs
    unit = "k instr" if args.instructions else "µs"

    old, every = replies(OLD_SET), replies(OLD_SET + NEW_SET)
    without = (",".join(ISSUE_23_DIALECTS),)
    measure = (
        "user-space instructions (valgrind)"
        if args.instructions
        else f"median of {runs} runs, CPU time"
    )
    print(
        f"CLI cost per reply, start-up subtracted ({args.repeat} times over, "
        f"{measure}):"
    )
    rows: list[tuple[str, str, tuple[str, ...], Path, str]] = [
        ("toolbelt", CLI, (), ROOT, ""),
        ("toolbelt, chain without the issue-23 dialects", _WITHOUT, without, ROOT, ""),
    ]
    if args.repo is not None:
        rows.append((f"toolbelt at {args.repo}", CLI, (), args.repo.resolve(), ""))
    if args.peer is not None:
        peer_path = os.pathsep.join(p for p in (str(args.peer), args.peer_path) if p)
        rows.append(("edgevox peer chain", _PEER, (), ROOT, peer_path))
    sets = (
        (f"old set, {len(old)} replies", old),
        (f"all fixtures, {len(every)} replies", every),
    )
    # Run by run, every row and set in turn: the machine's speed drifts from
    # one minute to the next (by more than the spread within a minute), and
    # rows measured one after the other would each get a different minute.
    figures: dict[tuple[str, str], list[float]] = {}
    for _ in range(runs):
        for label, program, extra, cwd, path in rows:
            for name, lines in sets:
                figures.setdefault((label, name), []).extend(
                    per_reply_runs(
                        program,
                        lines,
                        args=extra,
                        repeat=args.repeat,
                        runs=1,
                        cwd=cwd,
                        path=path,
                        instructions=args.instructions,
                    )
                )
    medians = {key: statistics.median(values) for key, values in figures.items()}
    for label, *_ in rows:
        for name, _ in sets:
            figure = medians[label, name]
            ratio = ""
            if label.startswith(("toolbelt at", "edgevox")):
                ratio = f"  (toolbelt / this: {medians['toolbelt', name] / figure:.2f})"
            spread = ""
            if runs > 1:
                low, high = min(figures[label, name]), max(figures[label, name])
                spread = f"  (runs {low:.1f}–{high:.1f})"
            print(f"  {label:48s} {name:28s} {figure:7.1f} {unit}{ratio}{spread}")


if __name__ == "__main__":
    main()
