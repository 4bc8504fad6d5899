"""Speed and memory of ra and its peers on real corpora (rust-book; cpp-docs in full runs).

Per corpus, in a temporary folder holding a copy of the corpus (never written in place):

1. full build: ra's build in a child process (``benchmarks.build.CHILD``: wall time per
   stage, peak RSS incl. worker processes) and each peer's index of ra's chunks, also in a
   child process; index sizes on disk. Peers start from chunks, ra from markdown files;
2. in-process query latency, p50/p95 over 100 short agent-style queries
   (``benchmarks.latency.agent_queries``), fuzzy off and on, each system in its own
   child process (so peak RSS is its own): ra as the MCP server holds its reader, each
   peer with its on-disk index opened once;
3. end-to-end process time of one query: ``ra search --list`` (which checks freshness
   first, as every reading command does) against a cold ``python -c`` per peer that opens
   the on-disk index and runs the query; ``python -c pass`` is the floor. ``ra search``
   runs with the daemon opted out (``RA_DAEMON=0``), through a warm ``ra daemon``, and
   with the daemon starting itself (``_autostart``: the first call of a fresh HOME, the
   calls right after it, the calls once the daemon listens);
4. freshness and incremental update: the no-change freshness check (p50 of 20); one file
   is touched and gets a line appended; timed: ra's ``open_index`` + one search (and the
   same with nothing changed), the update alone in a fresh and in a warm process, and a
   ``ra search`` process right after an edit; each peer's open + replace that document's
   chunks + one search (bm25s can only rebuild);
5. start-up: ``ra --help`` and ``ra search`` wall time and ``-X importtime`` totals, with
   the root packages that cost most;
6. ``ra context`` on a 2,016-line C++ file, cold process and warm in-process
   (``benchmarks.context_speed``);
7. the memory of a long-lived process (``_child_daemon_memory``: what ``ra daemon`` and
   ``ra mcp`` hold) once warm, after plain and other queries, and after each of a few edits.

Every ratio is ra ÷ peer from the same run. The child entry points are
``python -m benchmarks.speed build|latency|update|incremental|refresh|warm|daemon ...``.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import build as ra_build
from benchmarks import context_speed, latency, mcp, peers
from benchmarks.report import Table, progress, ratio
from benchmarks.scifact import SHARED, words_of

REPO = Path(__file__).resolve().parents[1]
PEERS = ("tantivy", "bm25s", "sqlite-fts5")
TREE = "corpus"
LIMIT = 5  # results per query: ra's default_limit
EDIT_LINE = "\nA line appended by the ra benchmark (incremental update probe).\n"
DAEMON_EDITS = 5  # edits a long-lived process indexes in ``_child_daemon_memory``


# --- child processes -------------------------------------------------------------------

def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


#: Forks and execs a command from a small process (the interpreter without site), times
#: it and prints its wall time and peak RSS as the last line. Forked straight from the
#: benchmark process, a child's ``ru_maxrss`` would include the parent's memory, which a
#: forked child carries until its ``exec``. ``argv[1]``: ``quiet`` discards the command's
#: stdout, ``pass`` lets it through (for child processes that report JSON).
SPAWN = r"""
import json, os, sys, time
t = time.perf_counter()
pid = os.fork()
if pid == 0:
    if sys.argv[1] == "quiet":
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
sys.stdout.flush()
print(json.dumps({"ms": (time.perf_counter() - t) * 1000, "rss_kb": usage.ru_maxrss,
                  "rc": os.waitstatus_to_exitcode(status)}))
"""


def spawn(cmd: list[str], cwd: Path, *, output: bool = False,
          env: dict | None = None) -> tuple[dict, list[str]]:
    """Run ``cmd`` (``cmd[0]`` a full path) under ``SPAWN``: its measurement and the
    command's stdout lines. ``env`` adds to the environment; ``ra`` runs in its own
    process (``RA_DAEMON=0``) unless ``env`` says otherwise."""
    out = subprocess.run([sys.executable, "-S", "-c", SPAWN, "pass" if output else "quiet",
                          *cmd], cwd=cwd, env={**_env(), "RA_DAEMON": "0", **(env or {})},
                         capture_output=True, text=True)
    lines = out.stdout.strip().splitlines()
    run = json.loads(lines[-1])
    if run["rc"] != 0:
        raise RuntimeError(f"{' '.join(cmd[:4])} exited {run['rc']}:\n{out.stderr[-3000:]}")
    return run, lines[:-1]


def child_json(args: list[str], cwd: Path = REPO) -> dict:
    """Run a child Python process and parse the JSON of its last stdout line."""
    return json.loads(spawn([sys.executable, *args], cwd, output=True)[1][-1])


def timed_process(cmd: list[str], cwd: Path, env: dict | None = None) -> tuple[float, float]:
    """Wall milliseconds and peak RSS (MB) of one process (``cmd[0]`` a full path)."""
    run, _ = spawn(cmd, cwd, env=env)
    return run["ms"], run["rss_kb"] / 1024


def peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def percentiles(ms: list[float]) -> dict:
    return {"p50_ms": round(latency.percentile(ms, .5), 2),
            "p95_ms": round(latency.percentile(ms, .95), 2),
            "mean_ms": round(statistics.mean(ms), 2), "n": len(ms)}


def settings_of(folder: Path) -> peers.Settings:
    from ra.config.settings import load_config

    return peers.Settings.from_config(load_config(folder))


def _child_build(name: str, chunks_path: str, out: str, ra_folder: str) -> dict:
    """Build one peer's on-disk index from ra's chunks."""
    chunks = peers.read_chunks(Path(chunks_path))
    before = peak_rss_mb()
    peer = peers.make(name, settings_of(Path(ra_folder)))
    t = time.perf_counter()
    peer.build(chunks, Path(out))
    peer.close()
    return {"wall_s": round(time.perf_counter() - t, 2), "peak_rss_mb": peak_rss_mb(),
            "rss_after_reading_chunks_mb": before, "index_bytes": peers.folder_bytes(Path(out))}


def _child_latency(system: str, index: str, queries_path: str, ra_folder: str) -> dict:
    """In-process p50/p95 of one system, fuzzy off (and on where it has fuzzy)."""
    queries = json.loads(Path(queries_path).read_text())
    if system == "ra":
        rows = [latency.in_process(Path(ra_folder), queries, fuzzy=f) for f in (False, True)]
        return {"runs": rows, "phases_ms": ra_phases(Path(ra_folder), queries),
                "peak_rss_mb": peak_rss_mb()}
    peer = peers.make(system, settings_of(Path(ra_folder)))
    peer.open(Path(index))
    rows = []
    for fuzzy in (False, True) if peer.fuzzy else (False,):
        for q in queries[:10]:  # warm caches, as latency.in_process does
            peer.search(words_of(q), LIMIT, fuzzy=fuzzy)
        ms = []
        for q in queries:
            t = time.perf_counter()
            peer.search(words_of(q), LIMIT, fuzzy=fuzzy)
            ms.append((time.perf_counter() - t) * 1000)
        rows.append({"fuzzy": fuzzy, **percentiles(ms)})
    peer.close()
    return {"runs": rows, "peak_rss_mb": peak_rss_mb()}


def current_rss_mb() -> float:
    """This process's resident memory now (not its peak), MB."""
    with open("/proc/self/status") as f:
        kb = next((int(line.split()[1]) for line in f if line.startswith("VmRSS:")), 0)
    return round(kb / 1024, 1)


def _child_warm(ra_folder: str, query: str) -> dict:
    """ra's warm reader (what the MCP server and the daemon hold): the time from opening
    it to the end of its first search (the search loads the index in memory), and the
    process's resident memory then, beside that of the same imports with no reader (a
    long-lived reader serves a plain search without DuckDB, which it does not import)."""
    import pyarrow.compute  # noqa: F401  (imported by any reader: counted in both figures)

    from ra.config.settings import load_config
    from ra.index.reader import IndexReader
    from ra.query.search import Searcher, SearchOptions

    config = load_config(Path(ra_folder))
    before = current_rss_mb()
    t = time.perf_counter()
    reader = IndexReader.open(config.index_dir, keep_vocabulary=True)
    Searcher(reader, config).search([query], SearchOptions())
    ready = time.perf_counter()
    out = {"open_ms": round((ready - t) * 1000, 1), "rss_mb": current_rss_mb(),
           "rss_before_mb": before, "peak_rss_mb": peak_rss_mb()}
    reader.close()
    return out


def _child_daemon_memory(ra_folder: str, edit: str, queries_file: str) -> dict:
    """What a long-lived process holds (``ra.index.warm.WarmIndex``, as ``ra daemon`` and
    ``ra mcp`` keep it, the writer prepared): RSS once warm, after the agent queries,
    after queries that are not plain (a negation and a phrase of each of 20 of them), and
    after each of ``DAEMON_EDITS`` edits of ``edit`` (each searched for, then the reader
    reloaded); and the peak."""
    from ra.config.settings import load_config
    from ra.index.warm import WarmIndex
    from ra.query.search import Searcher, SearchOptions

    queries = json.loads(Path(queries_file).read_text())
    index = WarmIndex(load_config(Path(ra_folder)), cwd=Path(ra_folder)).start()

    def search(query: str) -> int:
        with index.use() as reader:
            return len(Searcher(reader, index.config).search([query], SearchOptions())
                       .queries[0].results)

    def settled() -> None:  # warm, writer prepared, no reload pending
        index.wait_warm(300)
        deadline = time.monotonic() + 300
        while index._warming is not None or getattr(index._reader, "patched", True):
            if time.monotonic() > deadline:
                raise RuntimeError("the daemon's reader did not settle in 300 s")
            time.sleep(0.1)

    try:
        settled()
        out = {"warm_mb": current_rss_mb()}
        for q in queries:
            search(q)
        out["plain_mb"] = current_rss_mb()
        for q in [q for q in queries if len(q.split()) > 1][:20]:
            words = q.split()
            search(f"{' '.join(words[:-1])} -{words[-1]}")
            search(f'"{q}"')
        out["other_mb"] = current_rss_mb()
        after = []
        for i in range(DAEMON_EDITS):
            with open(edit, "a", encoding="utf-8") as f:
                f.write(f"\nA section the ra benchmark added: zqxbench{i}.\n")
            if not search(f"zqxbench{i}"):
                raise RuntimeError(f"edit {i} was not found after the update")
            settled()
            after.append(current_rss_mb())
        out["edits_mb"] = after
        out["peak_rss_mb"] = peak_rss_mb()
        return out
    finally:
        index.close()


def _daemon_memory(folder: Path, root: Path, edit: Path) -> dict:
    progress(f"daemon memory: warm, queries, {DAEMON_EDITS} edits")
    return child_json(["-m", "benchmarks.speed", "daemon", str(folder), str(edit),
                       str(root / "queries.json")])


def _warm_reader(folder: Path, query: str, runs: int = 3) -> dict:
    """``_child_warm`` in ``runs`` fresh processes: the median of each figure."""
    progress(f"warm reader: open and memory ({runs} processes)")
    rows = [child_json(["-m", "benchmarks.speed", "warm", str(folder), query])
            for _ in range(runs)]
    return {k: statistics.median(r[k] for r in rows) for k in rows[0]}


def ra_phases(folder: Path, queries: list[str]) -> dict[str, float]:
    """Median milliseconds of each phase of ra's search (``--explain`` timings)."""
    from ra.config.settings import load_config
    from ra.index.reader import IndexReader
    from ra.query.search import Searcher, SearchOptions

    config = load_config(folder)
    reader = IndexReader.open(config.index_dir, keep_vocabulary=True)
    searcher = Searcher(reader, config)
    phases: dict[str, list[float]] = {}
    for q in queries[:10] + queries:
        topic = searcher.search([q], SearchOptions(explain=True)).queries[0]
        for phase, ms in ((topic.explain or {}).get("timings_ms") or {}).items():
            phases.setdefault(phase, []).append(ms)
    reader.close()
    return {k: round(statistics.median(v[10:]), 2) for k, v in phases.items()}


def _child_incremental(ra_folder: str, edit: str, query: str) -> dict:
    """ra: the no-change freshness check (p50 of 20, after a first call), open_index + one
    search unchanged, then after appending a line to ``edit``; then the update alone in
    this now warm process (p50 of 5 edits)."""
    from ra.config.settings import load_config
    from ra.index.freshness import check_state, open_index, refresh_index
    from ra.query.search import Searcher

    config = load_config(Path(ra_folder))
    out = {"check": _check_times(config, check_state)}
    for step in ("unchanged", "edited"):
        if step == "edited":
            _append(edit)
        t = time.perf_counter()
        reader, status = open_index(config)
        t_open = time.perf_counter()
        Searcher(reader, config).search([query])
        done = time.perf_counter()
        reader.close()
        out[step] = {"open_index_ms": round((t_open - t) * 1000, 1),
                     "search_ms": round((done - t_open) * 1000, 1),
                     "total_ms": round((done - t) * 1000, 1), "status": status}
    warm = []
    for _ in range(5):
        _append(edit)
        t = time.perf_counter()
        refresh_index(config)
        warm.append((time.perf_counter() - t) * 1000)
    out["update_warm"] = percentiles(warm)
    out["peak_rss_mb"] = peak_rss_mb()
    return out


def _check_times(config, check_state) -> dict:
    t = time.perf_counter()
    assert check_state(config).state == "current"
    first = (time.perf_counter() - t) * 1000
    ms = []
    for _ in range(20):
        t = time.perf_counter()
        check_state(config)
        ms.append((time.perf_counter() - t) * 1000)
    return {"first_ms": round(first, 1), **percentiles(ms)}


def _append(path: str) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(EDIT_LINE)


def _child_refresh(ra_folder: str, edit: str) -> dict:
    """ra: the update alone in a fresh process (its imports included), one edited file."""
    from ra.config.settings import load_config
    from ra.index.freshness import refresh_index

    config = load_config(Path(ra_folder))
    _append(edit)
    t = time.perf_counter()
    status = refresh_index(config)
    return {"ms": round((time.perf_counter() - t) * 1000, 1), "status": status}


def _child_update(name: str, index: str, chunks_path: str, doc_id: str, query: str,
                  ra_folder: str) -> dict:
    """A peer: open its index, replace one document's chunks, run one search."""
    chunks = peers.read_chunks(Path(chunks_path))
    peer = peers.make(name, settings_of(Path(ra_folder)))
    t = time.perf_counter()
    peer.open(Path(index))
    t_open = time.perf_counter()
    peer.update(doc_id, chunks)
    t_update = time.perf_counter()
    peer.search(words_of(query), LIMIT)
    done = time.perf_counter()
    peer.close()
    return {"open_ms": round((t_open - t) * 1000, 1),
            "update_ms": round((t_update - t_open) * 1000, 1),
            "search_ms": round((done - t_update) * 1000, 1),
            "total_ms": round((done - t) * 1000, 1), "peak_rss_mb": peak_rss_mb()}


CHILDREN = {"build": _child_build, "latency": _child_latency, "context": context_speed.child,
            "warm": _child_warm, "daemon": _child_daemon_memory,
            "incremental": _child_incremental, "refresh": _child_refresh,
            "update": _child_update}


# --- one corpus --------------------------------------------------------------------------

def index_bytes(ra_folder: Path) -> dict[str, int]:
    """Bytes per artifact of ra's current generation (partition folders summed)."""
    from ra.config.settings import load_config
    from ra.store import generations

    gen = generations.open_current(load_config(ra_folder).index_dir)
    try:
        return {p.name: peers.folder_bytes(p) if p.is_dir() else p.stat().st_size
                for p in sorted(gen.path.iterdir()) if not p.name.startswith(".")}
    finally:
        gen.close()


def measure_corpus(corpus: Path, *, e2e_runs: int) -> dict:
    """Every speed measurement of one corpus (see the module docstring)."""
    with tempfile.TemporaryDirectory(prefix=f"ra-bench-{corpus.name}-") as tmp:
        root = Path(tmp)
        copy = root / "corpus"
        shutil.copytree(corpus, copy)
        folder = root / "ra"
        folder.mkdir()
        (folder / ".ra.toml").write_text(f'[tree.{TREE}]\npath = "{copy}"\n')
        progress(f"{corpus.name}: full ra build")
        result = {"corpus": corpus.name, "ra_build": child_json(["-c", ra_build.CHILD,
                                                                 str(folder)])}
        result["ra_build"].pop("artifact_bytes", None)
        result["ra_build"]["artifact_bytes"] = index_bytes(folder)
        queries, chunks = _queries_and_chunks(folder, root)
        result["queries"] = queries
        result["peer_build"] = _peer_builds(folder, root, chunks)
        result["latency"] = _latencies(folder, root, queries)
        result["warm_reader"] = _warm_reader(folder, queries[0])
        result["process"] = _processes(folder, root, queries[:e2e_runs])
        result["incremental"] = _incremental(folder, root, copy, queries[0])
        result["daemon_memory"] = _daemon_memory(folder, root, _edit_file(copy))
        result["context"] = context_speed.measure(folder, e2e_runs)
        result["mcp"] = mcp.measure(folder, queries)
    return result


def _queries_and_chunks(folder: Path, root: Path) -> tuple[list[str], Path]:
    from ra.config.settings import load_config
    from ra.index.freshness import open_index

    reader, _ = open_index(load_config(folder))
    try:
        queries = latency.agent_queries(reader, 100)
        chunks = peers.export_chunks(reader, root / "chunks")
    finally:
        reader.close()
    (root / "queries.json").write_text(json.dumps(queries))
    return queries, chunks


def _peer_builds(folder: Path, root: Path, chunks: Path) -> dict:
    out = {}
    for name in PEERS:
        progress(f"{root.name}: {name} build")
        out[name] = child_json(["-m", "benchmarks.speed", "build", name, str(chunks),
                                str(root / "peers" / name), str(folder)])
    return out


def _latencies(folder: Path, root: Path, queries: list[str]) -> dict:
    out = {}
    for name in ("ra", *PEERS):
        progress(f"in-process latency: {name} ({len(queries)} queries)")
        out[name] = child_json(["-m", "benchmarks.speed", "latency", name,
                                str(root / "peers" / name), str(root / "queries.json"),
                                str(folder)])
    return out


def ra_command() -> str:
    beside = Path(sys.executable).parent / "ra"
    return str(beside) if beside.exists() else shutil.which("ra") or "ra"


def _processes(folder: Path, root: Path, queries: list[str]) -> dict:
    """Cold one-query processes: ``ra search`` and each peer's script, plus the floor."""
    progress(f"process times: {len(queries)} runs each")
    runs: dict[str, list[tuple[float, float]]] = {"python -c pass": [], "ra search": []}
    settings = settings_of(folder)
    scripts = {name: peers.make(name, settings) for name in PEERS}
    for q in queries:
        runs["python -c pass"].append(timed_process([sys.executable, "-c", "pass"], folder))
        runs["ra search"].append(timed_process([ra_command(), "search", "--list", q], folder))
        for name, peer in scripts.items():
            code = peer.cold_code(root / "peers" / name, words_of(q), LIMIT)
            runs.setdefault(name, []).append(timed_process([sys.executable, "-c", code],
                                                           folder))
    with warm_daemon(root) as env:
        settle(folder, env, ["search", "--list", queries[0]])
        runs["ra search (daemon)"] = [timed_process([ra_command(), "search", "--list", q],
                                                    folder, env) for q in queries]
    autostarted, listening = _autostart(folder, root, queries)
    runs.update(autostarted)
    out = {name: {**percentiles([ms for ms, _ in r]),
                  "peak_rss_mb": round(max(rss for _, rss in r), 1)}
           for name, r in runs.items()}
    out["autostart: daemon listens (ms after the first answer)"] = {
        **percentiles([ms for ms, _ in listening]),
        "peak_rss_mb": max(rss for _, rss in listening)}  # the daemon's own
    return out


#: Fresh HOMEs in which ``_autostart`` makes a first call.
AUTOSTART_HOMES = 3


def _autostart(folder: Path, root: Path, queries: list[str]) -> tuple[dict, list]:
    """``ra search`` with the daemon starting itself, in ``AUTOSTART_HOMES`` fresh HOMEs:
    the first call (answered in its own process, then starting the daemon), every query
    right after it, back to back as an agent calls (in their own processes until the
    daemon has warmed the index and listens, then forwarded), and every query once it
    listens; ``(ms, peak RSS MB)`` lists by row. And per HOME, how long after the first
    call's answer the daemon listened, with the daemon's peak RSS."""
    from ra.cli.daemon_client import exchange

    runs: dict[str, list] = {f"ra search (autostart: {k})": [] for k in
                             ("first call", "next calls", "daemon up")}
    listening = []
    for i in range(AUTOSTART_HOMES):
        home = root / f"autostart-home-{i}"
        home.mkdir()
        env = {"HOME": str(home), "RA_DAEMON": "1", "RA_DAEMON_AUTOSTART": "1"}
        sock = str(home / ".ra" / "run" / "daemon.sock")
        args = [ra_command(), "search", "--list"]
        try:
            runs["ra search (autostart: first call)"].append(
                timed_process([*args, queries[i % len(queries)]], folder, env))
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                listened = pool.submit(_listening, sock, time.monotonic())
                runs["ra search (autostart: next calls)"] += [
                    timed_process([*args, q], folder, env) for q in queries]
                listened = listened.result()
            runs["ra search (autostart: daemon up)"] += [
                timed_process([*args, q], folder, env) for q in queries]
            listening.append((listened, exchange(sock, {"op": "status"}, 5.0)["peak_rss_mb"]))
        finally:
            subprocess.run([ra_command(), "daemon", "stop"], env={**_env(), **env},
                           capture_output=True)
    return runs, listening


def _listening(sock: str, since: float, timeout: float = 300.0) -> float:
    """Milliseconds from ``since`` (``time.monotonic``) until a daemon answers on ``sock``."""
    from ra.cli.daemon_client import exchange

    while exchange(sock, {"op": "status"}, 1.0) is None:
        if time.monotonic() - since > timeout:
            raise RuntimeError(f"no daemon listened on {sock} within {timeout:g} s")
        time.sleep(0.01)
    return (time.monotonic() - since) * 1000


@contextlib.contextmanager
def warm_daemon(root: Path):
    """A ``ra daemon`` of its own (HOME under ``root``) for the duration; yields the
    environment that lets ``ra`` processes forward to it."""
    env = {"HOME": str(root / "daemon-home"), "RA_DAEMON": "1", "RA_DAEMON_AUTOSTART": "0"}
    (root / "daemon-home").mkdir(exist_ok=True)
    subprocess.run([ra_command(), "daemon", "start", "--idle", "600"], check=True,
                   env={**_env(), **env}, capture_output=True)
    try:
        yield env
    finally:
        subprocess.run([ra_command(), "daemon", "stop"], env={**_env(), **env},
                       capture_output=True)


def settle(folder: Path, env: dict, args: list[str], seconds: float = 10.0) -> None:
    """Let a fresh daemon open the index and load it in memory (``ra.index.warm`` serves from
    Parquet meanwhile), so what follows measures the warm daemon."""
    timed_process([ra_command(), *args], folder, env)
    time.sleep(seconds)
    timed_process([ra_command(), *args], folder, env)


def _edit_file(copy: Path) -> Path:
    """The file the benchmark edits: the middle one of the corpus's markdown files."""
    files = sorted(p for p in copy.rglob("*.md") if not any(
        part.startswith(".") for part in p.relative_to(copy).parts))
    return files[len(files) // 2]


def _incremental(folder: Path, root: Path, copy: Path, query: str) -> dict:
    """Edit one file; time ra's refresh + search and each peer's update + search."""
    edit = _edit_file(copy)
    doc_id = f"{TREE}:{edit.relative_to(copy).as_posix()}"
    progress(f"incremental: editing {doc_id}")
    ra = child_json(["-m", "benchmarks.speed", "incremental", str(folder), str(edit), query])
    fresh = [child_json(["-m", "benchmarks.speed", "refresh", str(folder), str(edit)])["ms"]
             for _ in range(3)]
    ra["update_fresh"] = percentiles(fresh)
    searches = []
    for _ in range(5):  # one edit, then `ra search` as a process of its own
        _append(str(edit))
        searches.append(timed_process([ra_command(), "search", "--list", query], folder)[0])
    ra["search_after_edit"] = percentiles(searches)
    with warm_daemon(root) as env:  # the same, answered by a warm `ra daemon`
        settle(folder, env, ["search", "--list", query])
        searches = []
        for _ in range(5):
            _append(str(edit))
            searches.append(timed_process([ra_command(), "search", "--list", query], folder,
                                          env)[0])
    ra["search_after_edit_daemon"] = percentiles(searches)
    out = {"file": doc_id, "ra": ra}
    chunks = _queries_and_chunks(folder, root / "after")[1]
    for name in PEERS:
        out[name] = child_json(["-m", "benchmarks.speed", "update", name,
                                str(root / "peers" / name), str(chunks), doc_id, query,
                                str(folder)])
    return out


# --- start-up ----------------------------------------------------------------------------

def import_profile(args: list[str], cwd: Path) -> dict:
    """Total import time of a command and the root packages that cost most (self time).
    The command runs in its own process (``RA_DAEMON=0``), as ``spawn`` runs it: with the
    daemon on, ``ra search`` would forward to a daemon of the user's that runs, or start
    one after answering, which outlived the benchmark in the user's home."""
    out = subprocess.run([sys.executable, "-X", "importtime", *args], cwd=cwd,
                         env={**_env(), "RA_DAEMON": "0"}, capture_output=True, text=True)
    by_root: dict[str, int] = {}
    total = 0
    for line in out.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if not m:
            continue
        self_us, name = int(m.group(1)), m.group(4)
        total += self_us
        root = name.split(".")[0]
        by_root[root] = by_root.get(root, 0) + self_us
    top = sorted(by_root.items(), key=lambda kv: -kv[1])[:8]
    return {"import_ms": round(total / 1000, 1),
            "top": [(name, round(us / 1000, 1)) for name, us in top]}


def startup(folder: Path, query: str, runs: int = 10) -> dict:
    """``ra --help`` and ``ra search`` start-up: wall p50 and import-time profile."""
    progress("start-up and import time")
    ra = ra_command()
    out = {}
    for label, args in (("ra --help", ["--help"]),
                        ("ra search --list", ["search", "--list", query])):
        ms = [timed_process([ra, *args], folder)[0] for _ in range(runs)]
        out[label] = {"p50_ms": round(latency.percentile(ms, .5), 1),
                      **import_profile([ra, *args], folder)}
    floor = [timed_process([sys.executable, "-c", "pass"], folder)[0] for _ in range(runs)]
    out["python -c pass"] = {"p50_ms": round(latency.percentile(floor, .5), 1),
                             **import_profile(["-c", "pass"], folder)}
    return out


#: The corpora besides cpp-docs that a scaled corpus holds (``scaled_corpus``).
OTHERS = ("rust-book", "tldr", "powershell-docs", "gcp-community")


def scaled_corpus(scale: int, dest: Path) -> Path:
    """A corpus about ``scale`` times cpp-docs, as links in ``dest``: ``scale - 1``
    copies of cpp-docs and the four other corpora (``--scale 5``: 49,915 files, the
    issue's five-fold corpus). ``measure_corpus`` copies it, following the links."""
    folder = dest / f"corpora-x{scale}"
    folder.mkdir(parents=True)
    for i in range(1, scale):
        (folder / f"cpp-docs-{i}").symlink_to(SHARED / "corpora" / "cpp-docs")
    for name in OTHERS:
        (folder / name).symlink_to(SHARED / "corpora" / name)
    return folder


def compiled() -> None:
    """Compile ra's modules to bytecode before any process is timed, as ``pip install``
    does for an installed package: the benchmark runs the editable install of this
    checkout, and where ``PYTHONDONTWRITEBYTECODE`` is set (this workplace's machines, many
    container images) every fresh ``ra`` process compiled every module it imported, about
    80 ms of a one-shot ``ra search`` on cpp-docs that no installed ra pays."""
    import compileall
    import importlib.util

    compileall.compile_dir(Path(importlib.util.find_spec("ra").origin).parent, quiet=1)


def run(quick: bool = False, scale: int = 1) -> dict:
    compiled()
    names = ("rust-book",) if quick else ("rust-book", "cpp-docs")
    corpora = [measure_corpus(SHARED / "corpora" / n, e2e_runs=10 if quick else 20)
               for n in names]
    if scale > 1:
        with tempfile.TemporaryDirectory(prefix="ra-bench-scaled-") as tmp:
            corpora.append(measure_corpus(scaled_corpus(scale, Path(tmp)),
                                          e2e_runs=10 if quick else 20))
    with tempfile.TemporaryDirectory(prefix="ra-bench-startup-") as tmp:
        folder = Path(tmp)
        (folder / ".ra.toml").write_text(
            f'[tree.{TREE}]\npath = "{SHARED / "corpora" / "rust-book"}"\n')
        child_json(["-c", ra_build.CHILD, str(folder)])
        start = startup(folder, corpora[0]["queries"][0])
    return {"quick": quick, "scale": scale, "corpora": corpora, "startup": start}


# --- tables ------------------------------------------------------------------------------

def _mb(n: float) -> float:
    return round(n / 1e6, 2)


def tables(result: dict) -> list[Table]:
    return [_build_table(result), _stage_table(result), _artifact_table(result),
            _latency_table(result), _warm_reader_table(result), _daemon_table(result),
            _phase_table(result),
            _process_table(result),
            _incremental_table(result), _startup_table(result),
            context_speed.table(result), mcp.table(result)]


def _build_table(result: dict) -> Table:
    t = Table("Full index build: wall time, peak memory, index size",
              ["corpus", "system", "wall s", "peak RSS MB", "RSS before indexing MB",
               "index MB", "time ra÷peer", "RSS ra÷peer", "size ra÷peer"],
              note="ra reads, chunks and indexes the markdown files (2 worker processes; "
                   "RSS is the largest of the main process and its workers); each peer "
                   "indexes ra's chunks read from chunks.parquet (that read, with pyarrow, is "
                   "in its peak RSS, not in its wall time; the RSS before indexing column "
                   "shows it). Every index stores the chunk text.")
    for c in result["corpora"]:
        b = c["ra_build"]
        ra_bytes = sum(b["artifact_bytes"].values())
        t.rows.append([c["corpus"], "ra", b["wall_s"], b["peak_rss_mb"], None,
                       _mb(ra_bytes), None, None, None])
        for name, p in c["peer_build"].items():
            t.rows.append([c["corpus"], name, p["wall_s"], p["peak_rss_mb"],
                           p["rss_after_reading_chunks_mb"], _mb(p["index_bytes"]),
                           ratio(b["wall_s"], p["wall_s"]),
                           ratio(b["peak_rss_mb"], p["peak_rss_mb"]),
                           ratio(ra_bytes, p["index_bytes"])])
    return t


def _stage_table(result: dict) -> Table:
    t = Table("ra full build by stage (seconds)", ["corpus", "files", "chunks", "terms",
                                                   "postings", "stages"])
    for c in result["corpora"]:
        b = c["ra_build"]
        stages = ", ".join(f"{k} {v}" for k, v in b["stages_s"].items())
        t.rows.append([c["corpus"], b["files"], b["chunks"], b["terms"], b["postings"],
                       stages])
    return t


def _artifact_table(result: dict) -> Table:
    t = Table("ra artifacts (MB on disk)", ["corpus", "artifacts"])
    for c in result["corpora"]:
        sizes = c["ra_build"]["artifact_bytes"]
        t.rows.append([c["corpus"], ", ".join(f"{k} {_mb(v)}" for k, v in sizes.items())])
    return t


def _latency_table(result: dict) -> Table:
    t = Table("In-process query latency (100 short queries, top 5)",
              ["corpus", "system", "fuzzy", "p50 ms", "p95 ms", "mean ms", "peak RSS MB",
               "p50 ra÷peer", "p95 ra÷peer"],
              note="ra: Searcher.search on one reader holding its vocabulary in memory (as "
                   "the MCP server does), returning content and snippets; peers: the words "
                   "OR'd, returning chunk ords. Ratios compare the same fuzzy setting.")
    for c in result["corpora"]:
        ra_runs = {r["fuzzy"]: r for r in c["latency"]["ra"]["runs"]}
        for name, lat in c["latency"].items():
            for r in lat["runs"]:
                mine = ra_runs[r["fuzzy"]]
                mine_ok = name != "ra"
                t.rows.append([c["corpus"], name, "on" if r["fuzzy"] else "off", r["p50_ms"],
                               r["p95_ms"], r["mean_ms"], lat["peak_rss_mb"],
                               ratio(mine["p50_ms"], r["p50_ms"]) if mine_ok else None,
                               ratio(mine["p95_ms"], r["p95_ms"]) if mine_ok else None])
    return t


def _warm_reader_table(result: dict) -> Table:
    t = Table("ra's warm reader: memory and time to open",
              ["corpus", "warm reader RSS MB", "RSS without a reader MB", "peak RSS MB",
               "time to open ms"],
              note="What the MCP server and `ra daemon` hold: an IndexReader with the index "
                   "in memory, opened in a fresh process and ready when its first search "
                   "returns (that search, a plain one, loads it without DuckDB); RSS "
                   "then, beside the process's RSS with the same imports (ra, pyarrow) "
                   "and no reader. Median of 3 processes.")
    for c in result["corpora"]:
        w = c.get("warm_reader")
        if w:
            t.rows.append([c["corpus"], w["rss_mb"], w["rss_before_mb"], w["peak_rss_mb"],
                           w["open_ms"]])
    return t


def _daemon_table(result: dict) -> Table:
    t = Table("ra's long-lived process: memory",
              ["corpus", "warm MB", "after 100 queries MB", "after 40 other queries MB",
               f"after each of {DAEMON_EDITS} edits MB", "peak RSS MB"],
              note="A WarmIndex as `ra daemon` and `ra mcp` hold it (the writer prepared for "
                   "the first edit), in a fresh process: RSS once warm; after the 100 "
                   "agent queries (plain: scored from the impact arrays); after a negation "
                   "and a phrase of 20 of them (DuckDB scores those, over the relations "
                   "it then holds); after each edit of one file, searched for and the "
                   "reader reloaded. The warm reader above is the reader alone.")
    for c in result["corpora"]:
        d = c.get("daemon_memory")
        if d:
            t.rows.append([c["corpus"], d["warm_mb"], d["plain_mb"], d["other_mb"],
                           ", ".join(f"{m:g}" for m in d["edits_mb"]), d["peak_rss_mb"]])
    return t


def _phase_table(result: dict) -> Table:
    t = Table("Where ra's in-process search time goes (median ms per phase, fuzzy on)",
              ["corpus", "phases"],
              note="From `--explain` timings: parse, plan (vocabulary lookups, fuzzy "
                   "expansion), sql (the BM25F query in DuckDB), rank (aggregation, "
                   "elbow), fetch (content and snippets).")
    for c in result["corpora"]:
        phases = c["latency"]["ra"].get("phases_ms", {})
        t.rows.append([c["corpus"], ", ".join(f"{k} {v}" for k, v in phases.items())])
    return t


def _process_table(result: dict) -> Table:
    t = Table("One query as a fresh process (end to end)",
              ["corpus", "command", "runs", "p50 ms", "p95 ms", "peak RSS MB",
               "p50 ra÷peer"],
              note="`ra search --list QUERY` in the indexed folder (config discovery, "
                   "freshness check of every file, search, rendering) against `python -c` "
                   "scripts that open each peer's index and run the same query. "
                   "`ra search`: the daemon opted out (RA_DAEMON=0); `(daemon)`: a warm "
                   "`ra daemon` started beforehand; `(autostart: …)`: the daemon starting "
                   "itself, in 3 fresh HOMEs: the first call (answered in its own process, "
                   "then starting it), every query right after it (in their own processes "
                   "until the daemon has warmed up and listens), every query once it "
                   "listens; `autostart: daemon listens` is that wait, with the daemon's "
                   "peak RSS. ra's modules are compiled to bytecode first, as an installed "
                   "ra's are.")
    for c in result["corpora"]:
        ra = c["process"]["ra search"]["p50_ms"]
        for name, p in c["process"].items():
            t.rows.append([c["corpus"], name, p["n"], p["p50_ms"], p["p95_ms"],
                           p["peak_rss_mb"],
                           ratio(ra, p["p50_ms"]) if name in PEERS else None])
    return t


def _incremental_table(result: dict) -> Table:
    t = Table("Incremental update: one file edited (touch + one appended line)",
              ["corpus", "system", "step", "total ms", "detail", "total ra÷peer"],
              note="ra: `unchanged`/`edited` are open_index (fingerprint check, refresh) + "
                   "one search in a fresh process; `check` is the no-change freshness "
                   "check (p50 of 20 in one process); `update` is refresh_index after one "
                   "edit, in a fresh process (p50 of 3) and in a warm one (p50 of 5); "
                   "`edit → ra search` is a `ra search --list` process right after an edit "
                   "(p50 of 5). Peers: open + replace the document's chunks + one search "
                   "(bm25s has no update: it rebuilds).")
    for c in result["corpora"]:
        inc = c["incremental"]
        ra = inc["ra"]
        if "check" in ra:
            t.rows.append([c["corpus"], "ra", "check (no change)", ra["check"]["p50_ms"],
                           f"p95 {ra['check']['p95_ms']} ms, first call "
                           f"{ra['check']['first_ms']} ms", None])
        for step in ("unchanged", "edited"):
            s = ra[step]
            t.rows.append([c["corpus"], "ra", step, s["total_ms"],
                           f"open_index {s['open_index_ms']} ms, search {s['search_ms']} ms"
                           + (f"; {s['status']}" if s["status"] else ""), None])
        for key, label in (("update_fresh", "update (fresh process)"),
                           ("update_warm", "update (warm process)"),
                           ("search_after_edit", "edit → ra search"),
                           ("search_after_edit_daemon", "edit → ra search (daemon)")):
            if key in ra:
                t.rows.append([c["corpus"], "ra", label, ra[key]["p50_ms"],
                               f"p95 {ra[key]['p95_ms']} ms, n {ra[key]['n']}", None])
        for name in PEERS:
            p = inc[name]
            t.rows.append([c["corpus"], name, "edited", p["total_ms"],
                           f"open {p['open_ms']}, update {p['update_ms']}, "
                           f"search {p['search_ms']} ms",
                           ratio(ra["edited"]["total_ms"], p["total_ms"])])
    return t


def _startup_table(result: dict) -> Table:
    t = Table("Start-up: wall time and import time", ["command", "p50 ms", "imports ms",
                                                      "heaviest imports (ms, self time)"],
              note="rust-book index; `python -X importtime`, self times summed per root "
                   "package.")
    for name, s in result["startup"].items():
        t.rows.append([name, s["p50_ms"], s["import_ms"],
                       ", ".join(f"{n} {ms}" for n, ms in s["top"])])
    return t


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] in CHILDREN:
        print(json.dumps(CHILDREN[sys.argv[1]](*sys.argv[2:])))
    else:
        for table in tables(run("--quick" in sys.argv)):
            print(table.markdown())
