"""The MCP server over stdio, measured with the SDK's own client: what an agent waits for.

- start → first answer: from spawning ``ra mcp`` (the client launches it, as an agent
  runtime does) through the handshake to the result of the first ``search``; the index is
  up to date, so this is start-up, not indexing. Each start is a fresh process.
- per call: p50/p95 of ``search`` round trips over stdio on a server that has been
  answering for a while (its warm reader is ready), full results (what agents ask for by
  default) and ``list`` results; and the server's CPU time per call (``server_cpu``, on
  Linux), split between its main thread (the event loop: the SDK's request handling and
  ra's stdio) and the others (ra's worker thread: the search and its rendering). The
  round trip also holds the client's CPU time and the wake-ups between the processes; on
  a shared machine the CPU time shows what the server itself costs.

Queries are ``benchmarks.latency.agent_queries`` of the corpus. ``benchmarks.speed`` runs
it on each corpus (``measure``, ``table``); ``python -m benchmarks.mcp FOLDER`` measures
one indexed folder and prints the table. ``env`` (e.g. the ``PYTHONPATH`` of another
checkout) lets an A/B comparison start another build of the server with the same client.

``python -m benchmarks.mcp FOLDER NAME=SRC NAME=SRC ...`` compares builds instead (SRC: a
checkout's ``src`` folder, ``-`` for the installed one): one client starts a server of
each, and every query goes to each in turn (the order reversed every other round), so a
machine whose load drifts slows them alike (``interleaved``).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from benchmarks import latency
from benchmarks.report import Table

#: Seconds a fresh server answers before per-call latency is measured: long enough for
#: its in-memory tables to be ready on a large corpus (loading starts ``ra.index.warm.START_DELAY``
#: after start, then the writer is prepared, ``ra.index.warm._prepare_writer``).
SETTLE_SECONDS = 14.0


#: Starts ``ra mcp`` through ``ra.cli.app`` rather than the console script, so that other
#: checkouts (``env``'s ``PYTHONPATH``) start the same way.
LAUNCH = "import sys; from ra.cli.app import main; sys.exit(main(sys.argv[1:]))"


def server_params(folder: Path, env: dict | None = None):
    from mcp import StdioServerParameters

    if env is None:  # the installed console script, as an agent runtime starts it
        command, args = str(Path(sys.executable).with_name("ra")), ["mcp"]
    else:
        command, args = sys.executable, ["-c", LAUNCH, "mcp"]
    return StdioServerParameters(command=command, args=args, cwd=str(folder),
                                 env={"RA_DAEMON": "0", **(env or {})})


def children() -> set[int]:
    """The ids of this process's child processes (the servers its clients start), read from
    ``/proc``; empty where there is none."""
    me, out = os.getpid(), set()
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:  # the parent's id follows the name
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == me:
                        out.add(int(name))
            except (OSError, IndexError, ValueError):  # gone meanwhile
                continue
    return out


def server_cpu(pid: int | None) -> tuple[float, float] | None:
    """Seconds of CPU time process ``pid`` has used so far in its main thread and in its
    other threads, from each thread's ``/proc/PID/task/TID/schedstat`` (nanoseconds, where
    ``stat`` counts 10 ms ticks: a search is a few milliseconds); None where not known.
    A thread that has ended is no longer listed, and its time no longer counts: the
    server's worker threads (anyio's) live on between calls."""
    if pid is None:
        return None
    main = other = 0.0
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                seconds = int(f.read().split()[0]) / 1e9
        except (OSError, IndexError, ValueError):  # a thread that ended meanwhile
            continue
        if tid == str(pid):
            main += seconds
        else:
            other += seconds
    return main, other


def cpu_per_call(before, after, calls: int) -> dict:
    """Milliseconds of the server's CPU time per call between two ``server_cpu`` readings:
    its main thread, its other threads, both; empty when either reading is missing."""
    if before is None or after is None or not calls:
        return {}
    main, other = ((b - a) * 1000 / calls for a, b in zip(before, after, strict=True))
    return {"server_cpu_ms": round(main + other, 2), "loop_cpu_ms": round(main, 2),
            "worker_cpu_ms": round(other, 2)}


async def _started(stack, folder: Path, env: dict | None):
    """A client connected to a server it started, and that server's process id (None when
    it cannot be told apart from this process's other children)."""
    from mcp import Client

    before = children()
    client = await stack.enter_async_context(Client(server_params(folder, env)))
    new = children() - before
    return client, (new.pop() if len(new) == 1 else None)


async def _start_to_first_answer(folder: Path, query: str, env: dict | None) -> float:
    from mcp import Client

    t = time.perf_counter()
    async with Client(server_params(folder, env)) as client:
        result = await client.call_tool("search", {"queries": query})
        ms = (time.perf_counter() - t) * 1000
    if result.is_error:
        raise RuntimeError(f"ra mcp answered an error: {result.content[0].text}")
    return ms


async def _per_call(folder: Path, queries: list[str], env: dict | None) -> dict:
    from contextlib import AsyncExitStack

    import anyio

    out = {}
    async with AsyncExitStack() as stack:
        client, pid = await _started(stack, folder, env)
        await client.call_tool("search", {"queries": queries[0]})
        await anyio.sleep(SETTLE_SECONDS)
        for label, extra in (("full", {}), ("list", {"list": True})):
            for q in queries[:10]:  # warm the caches, as latency.in_process does
                await client.call_tool("search", {"queries": q, **extra})
            ms, before = [], server_cpu(pid)
            for q in queries:
                t = time.perf_counter()
                result = await client.call_tool("search", {"queries": q, **extra})
                ms.append((time.perf_counter() - t) * 1000)
                if result.is_error:
                    raise RuntimeError(f"ra mcp answered an error: {result.content[0].text}")
            out[label] = {"p50_ms": round(latency.percentile(ms, .5), 2),
                          "p95_ms": round(latency.percentile(ms, .95), 2), "n": len(ms),
                          **cpu_per_call(before, server_cpu(pid), len(ms))}
    return out


async def _interleaved(folder: Path, queries: list[str], envs: dict[str, dict | None],
                       rounds: int) -> tuple[dict, dict]:
    """The round trips of each build and mode, in ms, and each build's ``cpu_per_call`` in
    each mode. A server's CPU time is read before each call it gets: what it spent from
    then to the next reading is that call's, including the work that follows its answer
    (ending the request's task), which a reading right after the answer would miss."""
    from contextlib import AsyncExitStack

    import anyio

    modes = {"full": {}, "list": {"list": True}}
    ms: dict[tuple[str, str], list[float]] = {(n, m): [] for n in envs for m in modes}
    spent: dict[tuple[str, str], list | None] = {(n, m): [0.0, 0.0] for n in envs
                                                 for m in modes}
    async with AsyncExitStack() as stack:
        clients, pids = {}, {}
        for name, env in envs.items():
            clients[name], pids[name] = await _started(stack, folder, env)
        for client in clients.values():
            await client.call_tool("search", {"queries": queries[0]})
        await anyio.sleep(SETTLE_SECONDS)
        last: dict[str, tuple] = {}  # a build's latest reading and the mode it counts for
        for r in range(-1, rounds):  # round -1 warms the caches
            order = list(clients.items())[::1 if r % 2 else -1]
            for q in queries if r >= 0 else queries[:10]:
                for mode, extra in modes.items():
                    for name, client in order:
                        _count(spent, name, last, server_cpu(pids[name]),
                               mode if r >= 0 else None)
                        t = time.perf_counter()
                        result = await client.call_tool("search", {"queries": q, **extra})
                        if r >= 0:
                            ms[(name, mode)].append((time.perf_counter() - t) * 1000)
                        if result.is_error:
                            raise RuntimeError(f"{name} answered an error: "
                                               f"{result.content[0].text}")
        await anyio.sleep(0.1)  # the last calls' ends
        for name in clients:
            _count(spent, name, last, server_cpu(pids[name]), None)
    return ms, {key: cpu_per_call((0.0, 0.0), total, len(ms[key])) if total else {}
                for key, total in spent.items()}


def _count(spent: dict, name: str, last: dict, reading, mode: str | None) -> None:
    """Add the CPU time since build ``name``'s previous reading to the mode that reading
    was taken for (none: a warming call), then keep ``reading`` for ``mode``. A missing
    reading makes the mode's total None."""
    before, counted = last.get(name, (None, None))
    if counted is not None:
        key = (name, counted)
        if spent[key] is not None and before is not None and reading is not None:
            spent[key] = [s + b - a for s, a, b in zip(spent[key], before, reading,
                                                        strict=True)]
        else:
            spent[key] = None
    last[name] = (reading, mode)


def interleaved(folder: Path, queries: list[str], srcs: dict[str, str],
                rounds: int = 5) -> Table:
    """Per-call latency of several builds of the server, measured in turn."""
    import anyio

    envs = {name: None if src == "-" else {"PYTHONPATH": src} for name, src in srcs.items()}
    ms, cpu = anyio.run(_interleaved, folder, queries, envs, rounds)
    t = Table("MCP per call, builds interleaved",
              ["build", "search p50 ms", "search p95 ms", "list p50 ms", "list p95 ms",
               "search server CPU ms", "list server CPU ms"],
              note=f"{rounds} rounds x {len(queries)} queries, each query to each build in "
                   "turn; server CPU: the mean per call, its main thread (the event loop) + "
                   "its other threads (the worker: search, rendering); load average before "
                   "and after: see the run's output.")
    for name in srcs:
        full, listed = ms[(name, "full")], ms[(name, "list")]
        t.rows.append([name, *(round(latency.percentile(v, q), 2)
                               for v in (full, listed) for q in (.5, .95)),
                       *(_cpu_cell(cpu[(name, mode)]) for mode in ("full", "list"))])
    return t


def _cpu_cell(cpu: dict) -> str | None:
    """``cpu_per_call`` as a table shows it: "total (loop + worker)"; None without it (no
    ``/proc``, a result of an older run)."""
    if "server_cpu_ms" not in cpu:
        return None
    return f"{cpu['server_cpu_ms']:.2f} ({cpu['loop_cpu_ms']:.2f} + {cpu['worker_cpu_ms']:.2f})"


def measure(folder: Path, queries: list[str], *, starts: int = 5,
            env: dict | None = None) -> dict:
    """Start-to-first-answer (``starts`` fresh servers) and per-call latency over stdio."""
    import anyio

    from benchmarks.report import progress

    progress(f"MCP over stdio: {starts} starts, {len(queries)} calls")
    firsts = [anyio.run(_start_to_first_answer, folder, queries[i % len(queries)], env)
              for i in range(starts)]
    calls = anyio.run(_per_call, folder, queries, env)
    return {"first_answer_ms": [round(ms, 1) for ms in firsts],
            "first_answer_p50_ms": round(latency.percentile(firsts, .5), 1), "calls": calls}


def table(result: dict) -> Table:
    """One row per corpus of a ``benchmarks.speed`` result (its ``mcp`` entries)."""
    t = Table("MCP server over stdio (the SDK's client): start to first answer, per call",
              ["corpus", "start → first answer p50 ms", "each start ms",
               "search p50 ms", "search p95 ms", "list p50 ms", "list p95 ms",
               "search server CPU ms"],
              note="A fresh `ra mcp` per start, spawned by `mcp.Client` (process start, "
                   "handshake, first `search`, index up to date); per call: round trips of "
                   "100 agent-style queries on a server that has answered for "
                   f"{SETTLE_SECONDS:.0f} s, full results and `list: true`; the server's "
                   "CPU time per full call, its main thread (the event loop: the SDK's "
                   "request handling) + its other threads (the worker: search, rendering).")
    for c in result["corpora"]:
        m = c.get("mcp")
        if m is None:
            continue
        full, listed = m["calls"]["full"], m["calls"]["list"]
        t.rows.append([c["corpus"], m["first_answer_p50_ms"],
                       ", ".join(f"{ms:.0f}" for ms in m["first_answer_ms"]),
                       full["p50_ms"], full["p95_ms"], listed["p50_ms"], listed["p95_ms"],
                       _cpu_cell(full)])
    return t


def queries_of(folder: Path, n: int = 100) -> list[str]:
    from ra.config.settings import load_config
    from ra.index.freshness import open_index

    reader, _ = open_index(load_config(folder))
    with reader:
        return latency.agent_queries(reader, n)


if __name__ == "__main__":
    folder = Path(sys.argv[1]).resolve()
    if len(sys.argv) > 2:  # NAME=SRC ...: builds compared
        import os

        load = os.getloadavg()[0]
        builds = dict(arg.split("=", 1) for arg in sys.argv[2:])
        print(interleaved(folder, queries_of(folder), builds).markdown())
        print(f"load average {load:.2f} before, {os.getloadavg()[0]:.2f} after")
        sys.exit(0)
    result = {"corpus": folder.name, "mcp": measure(folder, queries_of(folder))}
    print(json.dumps(result["mcp"]), file=sys.stderr)
    print(table({"corpora": [result]}).markdown())
