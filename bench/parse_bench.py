"""Alias kept for issue 3's name: runs ``bench/toolcalls_bench.py``."""

from __future__ import annotations

from pathlib import Path
import runpy

if __name__ == "__main__":
    runpy.run_path(
        str(Path(__file__).with_name("toolcalls_bench.py")), run_name="__main__"
    )
