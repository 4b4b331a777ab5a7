"""Figures for our tools: page extraction and SQLite memory (run: .venv/bin/python -m bench.tools_bench)."""

from __future__ import annotations

import asyncio
from pathlib import Path
import resource
import sqlite3
import statistics
import tempfile
import time

from custom_components.toolbelt.tools.fetch.extract import extract_html
from custom_components.toolbelt.tools.memory.sqlite import SqliteMemory


def _page(paragraphs: int) -> bytes:
    nav = "".join(f'<li><a href="/p{i}">Menu {i}</a></li>' for i in range(200))
    body = "".join(
        f"<p>Paragraph {i}: the quick brown fox jumps over the lazy dog while the "
        f"eclipse crosses Spain and totality lasts one minute forty seconds.</p>"
        for i in range(paragraphs)
    )
    html = (
        f"<html><head><title>T</title><script>{'x=1;' * 2000}</script></head><body>"
        f"<nav><ul>{nav}</ul></nav><article><h1>Guide</h1>{body}</article>"
        f"<footer>{'cookie ' * 500}</footer></body></html>"
    )
    return html.encode()


def bench_extract() -> None:
    for paragraphs in (50, 1000, 8000):
        page = _page(paragraphs)
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            extract_html(page)
            times.append(time.perf_counter() - t0)
        print(f"extract_html {len(page) / 1024:7.0f} KB: {min(times) * 1000:7.1f} ms")


# 2 MB pages built to be slow to extract (before the element bound, "paragraphs"
# took 23 s of CPU and 427 MB peak; "table" 11.7 s, "links" 10.3 s).
CRAFTED = {
    "paragraphs": b"<html><body>" + b"<p>word " * 250_000 + b"</body></html>",
    "table": b"<html><body><table>"
    + b"<tr><td>a</td><td>b</td></tr>" * 70_000
    + b"</table></body></html>",
    "links": b"<html><body>" + b"<a href='/x'>link text here</a> " * 60_000,
    "one text node": b"<html><body><p>" + b"lorem ipsum " * 170_000 + b"</p>",
    "deep nesting": b"<html><body>" + b"<div>x" * 100_000 + b"</div>" * 100_000,
}


def bench_crafted() -> None:
    """Worst pages the fetcher may hand over: CPU time and peak memory."""
    for name, page in CRAFTED.items():
        t0 = time.process_time()
        extract_html(page, "https://e.org/", max_chars=8000)
        cpu = time.process_time() - t0
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"crafted {name:14s} {len(page) / 1e6:.1f} MB: {cpu * 1000:6.0f} ms CPU,"
            f" process peak {peak:.0f} MB"
        )


async def bench_memory() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = SqliteMemory(Path(tmp) / "m.db")
        t0 = time.perf_counter()
        stores = []
        for i in range(200):
            s0 = time.perf_counter()
            await store.store(
                None, f"Fact {i}: someone likes item {i % 37} on day {i % 7}."
            )
            stores.append(time.perf_counter() - s0)
        print(
            f"store (fsync'd commit): median {statistics.median(stores) * 1000:.2f} ms"
        )
        conn_rows = [
            (None, f"Bulk fact {i} about topic {i % 113} and colour {i % 11}.")
            for i in range(10000)
        ]
        await store._run(
            lambda c: c.executemany(
                "INSERT INTO memories(owner, content, created, updated) "
                "VALUES (?, ?, 'x', 'x')",
                conn_rows,
            )
        )
        searches = []
        for i in range(50):
            s0 = time.perf_counter()
            await store.search(None, f"what about topic {i} colour", 5)
            searches.append(time.perf_counter() - s0)
        print(
            f"search over 10,200 memories: median {statistics.median(searches) * 1000:.2f} ms"
        )
        # A delete rewrites the FTS index and empties the WAL (the words are gone).
        deletes = []
        for i in range(1, 21):
            s0 = time.perf_counter()
            await store.delete(None, str(i))
            deletes.append(time.perf_counter() - s0)
        print(
            "delete over 10,200 memories (index rebuilt, WAL emptied): median"
            f" {statistics.median(deletes) * 1000:.2f} ms"
        )
        await store.async_close()
        del t0
        await bench_first_use(Path(tmp))


async def bench_first_use(tmp: Path) -> None:
    """The first use after a start finishes any wipe left unfinished (a full disk,
    a crash): what it costs on a clean index, and after a delete whose wipe
    failed (a disk with room for 4 more pages: SQLite's max_page_count)."""
    path = tmp / "first_use.db"
    store = SqliteMemory(path)
    rows = [(None, f"Fact {i} about topic {i % 113}.") for i in range(10000)]

    def build(conn: sqlite3.Connection) -> None:
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO memories(owner, content, created, updated) "
            "VALUES (?, ?, 'x', 'x')",
            rows,
        )
        conn.execute("COMMIT")
        conn.execute("INSERT INTO memories_fts(memories_fts) VALUES ('optimize')")
        conn.execute("VACUUM")  # no free pages: the cap below is the only room

    await store._run(build)
    await store.async_close()
    for unfinished in (False, True):
        if unfinished:
            store = SqliteMemory(path)
            await store._run(
                lambda c: c.execute(
                    "PRAGMA max_page_count ="
                    f" {c.execute('PRAGMA page_count').fetchone()[0] + 4}"
                ).fetchone()
            )
            await store.delete(None, "30")
            assert store.erasure_note, "the wipe should have failed"
            await store.async_close()
        # CPU time of the whole process (the database thread included): the
        # figure does not depend on what else the machine runs.
        store = SqliteMemory(path)
        s0 = time.process_time()
        await store.search(None, "topic 5", 5)
        first = time.process_time() - s0
        s0 = time.process_time()
        await store.search(None, "topic 6", 5)
        second = time.process_time() - s0
        await store.async_close()
        what = "after a delete whose wipe failed" if unfinished else "clean index"
        print(
            f"first search after a start, 10,000 memories, {what}:"
            f" {first * 1000:.1f} ms CPU (the next one {second * 1000:.1f} ms)"
        )


if __name__ == "__main__":
    bench_extract()
    bench_crafted()
    asyncio.run(bench_memory())
