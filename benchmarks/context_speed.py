"""``ra context`` on a 2,016-line C++ source file: cold process and warm in-process time.

The acceptance case of ``ra context`` speed: ``CONTEXT_FILE``, written by
``context_source`` (29 resource-manager class templates with mutexes, shared handles and
Win32 calls, the same bytes every run), inside the benchmark's ra folder but outside its
tree, so ``ra context`` reads it, ranks its words against the index and searches; nothing
is excluded and freshness has nothing to rebuild. Two measurements:

- cold: ``ra context --list src/inventory.cpp`` as a fresh process (start-up, imports,
  freshness check, opening the index, the context work, rendering), ``e2e_runs`` times;
- warm: ``context_search`` repeated on one reader that keeps its relations in memory
  (``keep_vocabulary``, as the MCP server and the daemon hold it), in a child process:
  the first call (which loads them) apart, then p50/p95 wall and CPU time of the rest and
  the median of each ``--explain`` phase (signals, sql, rank+fetch).

The child entry point is ``python -m benchmarks.speed context FOLDER FILE RUNS``.
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

CONTEXT_FILE = "src/inventory.cpp"
WARM_RUNS = 30
_NAMES = ("Buffer", "Socket", "Session", "Packet", "Registry", "Allocator", "Scheduler",
          "Widget", "Texture", "Archive", "Parser", "Token", "Channel", "Timer", "Cache")
_HEADER = """\
// Inventory service: a multithreaded cache over a COM-free storage backend.
#include <vector>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <string>
#include <stdexcept>
#include <functional>
#include <atomic>
#include <condition_variable>
#include <windows.h>

namespace inventory {

"""
_CLASS = """\
// @Manager owns every # and hands out shared handles.
template <typename T>
class @Manager$ {
public:
    explicit @Manager$(std::size_t capacity) : capacity_(capacity) {
        items_.reserve(capacity);
    }

    @Manager$(const @Manager$&) = delete;
    @Manager$& operator=(const @Manager$&) = delete;

    std::shared_ptr<T> acquire(const std::wstring& name) {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = index_.find(name);
        if (it != index_.end()) {
            return it->second;
        }
        if (items_.size() >= capacity_) {
            throw std::out_of_range("# capacity exceeded");
        }
        auto item = std::make_shared<T>(name);
        items_.push_back(item);
        index_.emplace(name, item);
        cv_.notify_one();
        return item;
    }

    void release(const std::wstring& name) noexcept {
        std::unique_lock<std::mutex> lock(mutex_);
        index_.erase(name);
        cv_.wait_for(lock, std::chrono::milliseconds(10));
    }

    template <typename Fn>
    void for_each(Fn&& fn) const {
        std::lock_guard<std::mutex> lock(mutex_);
        for (const auto& item : items_) {
            fn(*item);
        }
    }

    HRESULT save(HANDLE file) const {
        DWORD written = 0;
        BOOL ok = WriteFile(file, items_.data(), static_cast<DWORD>(items_.size()), \
&written, nullptr);
        return ok ? S_OK : HRESULT_FROM_WIN32(GetLastError());
    }

private:
    std::size_t capacity_;
    mutable std::mutex mutex_;
    std::condition_variable cv_;
    std::vector<std::shared_ptr<T>> items_;
    std::unordered_map<std::wstring, std::shared_ptr<T>> index_;
    std::atomic<int> refs_{0};
};

inline void run_#_workers$(@Manager$<int>& manager) {
    std::vector<std::thread> workers;
    for (int w = 0; w < 4; ++w) {
        workers.emplace_back([&manager, w] {
            auto handle = manager.acquire(L"#" + std::to_wstring(w));
            (void)handle;
        });
    }
    for (auto& t : workers) {
        t.join();
    }
}
"""


def context_source(classes: int = 29) -> str:
    """The benchmark's C++ file: 2,016 lines for the default 29 classes."""
    blocks = []
    for i in range(1, classes + 1):
        name = _NAMES[(i - 1) % len(_NAMES)]
        blocks.append(_CLASS.replace("@", name).replace("#", name.lower())
                      .replace("$", str(i)))
    return _HEADER + "\n".join(blocks) + "} // namespace inventory\n"


def write_context_file(folder: Path) -> Path:
    path = folder / CONTEXT_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(context_source())
    return path


def child(ra_folder: str, file: str, runs: str = str(WARM_RUNS)) -> dict:
    """Warm in-process ``context_search`` timings (see the module docstring)."""
    from ra.config.settings import load_config
    from ra.index.reader import IndexReader
    from ra.query.context import ContextOptions, context_search

    folder = Path(ra_folder)
    os.chdir(folder)
    config = load_config(folder)
    reader = IndexReader.open(config.index_dir, keep_vocabulary=True)
    t = time.perf_counter()
    context_search(reader, config, [file])
    first = (time.perf_counter() - t) * 1000
    wall, cpu, phases = [], [], {}
    for i in range(int(runs)):
        t, c = time.perf_counter(), time.process_time()
        topic = context_search(reader, config, [file],
                               ContextOptions(explain=i % 2 == 1)).queries[0]
        wall.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
        for phase, ms in ((topic.explain or {}).get("timings_ms") or {}).items():
            phases.setdefault(phase, []).append(ms)
    reader.close()
    return {"first_ms": round(first, 1), "wall": _spread(wall), "cpu": _spread(cpu),
            "phases_ms": {k: round(statistics.median(v), 1) for k, v in phases.items()},
            "results": len(topic.results)}


def _spread(ms: list[float]) -> dict:
    ordered = sorted(ms)
    return {"p50_ms": round(statistics.median(ordered), 1),
            "p95_ms": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 1),
            "n": len(ordered)}


def measure(folder: Path, e2e_runs: int) -> dict:
    """Cold process and warm in-process time of ``ra context`` on the benchmark file."""
    from benchmarks import speed
    from benchmarks.report import progress

    write_context_file(folder)
    progress(f"ra context: {CONTEXT_FILE}, warm in-process and {e2e_runs} cold processes")
    warm = speed.child_json(["-m", "benchmarks.speed", "context", str(folder), CONTEXT_FILE,
                             str(WARM_RUNS)])
    command = [speed.ra_command(), "context", "--list", CONTEXT_FILE]
    cold = [speed.timed_process(command, folder) for _ in range(e2e_runs)]
    with speed.warm_daemon(folder.parent) as env:  # the same command, a warm `ra daemon`
        speed.settle(folder, env, command[1:])
        daemon = [speed.timed_process(command, folder, env) for _ in range(e2e_runs)]
    return {"file": CONTEXT_FILE, "lines": context_source().count("\n"), "warm": warm,
            "cold": {**_spread([ms for ms, _ in cold]),
                     "peak_rss_mb": round(max(rss for _, rss in cold), 1)},
            "daemon": {**_spread([ms for ms, _ in daemon]),
                       "peak_rss_mb": round(max(rss for _, rss in daemon), 1)}}


def table(result: dict):
    from benchmarks.report import Table

    t = Table("ra context on a 2,016-line C++ file",
              ["corpus", "run", "p50 ms", "p95 ms", "detail"],
              note="cold: `ra context --list FILE` as a fresh process (start-up, freshness "
                   "check, opening the index, context work, rendering); warm: "
                   "`context_search` again on one reader holding its relations in memory "
                   "(as the MCP server and daemon do), wall and CPU time; phases from "
                   "`--explain` (medians).")
    for c in result["corpora"]:
        ctx = c.get("context")
        if ctx is None:
            continue
        w, cold = ctx["warm"], ctx["cold"]
        t.rows.append([c["corpus"], "cold process", cold["p50_ms"], cold["p95_ms"],
                       f"{cold['n']} runs, peak RSS {cold['peak_rss_mb']} MB"])
        if "daemon" in ctx:
            d = ctx["daemon"]
            t.rows.append([c["corpus"], "process, ra daemon running", d["p50_ms"],
                           d["p95_ms"], f"{d['n']} runs, client peak RSS "
                           f"{d['peak_rss_mb']} MB"])
        t.rows.append([c["corpus"], "warm, wall", w["wall"]["p50_ms"], w["wall"]["p95_ms"],
                       f"first call {w['first_ms']} ms (loads the relations); "
                       + ", ".join(f"{k} {v}" for k, v in w["phases_ms"].items())])
        t.rows.append([c["corpus"], "warm, CPU", w["cpu"]["p50_ms"], w["cpu"]["p95_ms"],
                       f"{w['results']} results"])
    return t
