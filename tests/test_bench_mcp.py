"""``benchmarks.mcp``'s reading of a server's CPU time per call (``/proc``, Linux)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest
from benchmarks import mcp as bench

linux = pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="reads /proc")


def _burn(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


@linux
def test_server_cpu_splits_the_main_thread_from_the_others():
    before = bench.server_cpu(os.getpid())
    _burn(0.05)
    middle = bench.server_cpu(os.getpid())
    burnt, read = threading.Event(), threading.Event()

    def work() -> None:  # alive until read: an ended thread's time is no longer listed
        _burn(0.05)
        burnt.set()
        read.wait(10)

    worker = threading.Thread(target=work)
    worker.start()
    burnt.wait(10)
    after = bench.server_cpu(os.getpid())
    read.set()
    worker.join()
    main = middle[0] - before[0]
    assert 0.045 <= main < 1  # (other threads of the test run may work meanwhile)
    main, other = (b - a for a, b in zip(middle, after, strict=True))
    assert main < 0.02 and other >= 0.045
    assert bench.server_cpu(None) is None


@linux
def test_children_are_the_processes_this_one_started():
    before = bench.children()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert bench.children() - before == {child.pid}
    finally:
        child.kill()
        child.wait()


def test_cpu_per_call_is_milliseconds_per_call_and_empty_without_readings():
    assert bench.cpu_per_call((1.0, 2.0), (1.1, 2.3), 100) == {
        "server_cpu_ms": 4.0, "loop_cpu_ms": 1.0, "worker_cpu_ms": 3.0}
    assert bench.cpu_per_call(None, (1.0, 1.0), 10) == {}
    assert bench.cpu_per_call((1.0, 1.0), (2.0, 2.0), 0) == {}


def test_a_call_counts_what_its_server_spends_until_its_next_reading():
    """The interleaved comparison reads a server before each call: the time up to the
    next reading, the work after the answer included, is that call's, in its mode."""
    spent = {("a", "full"): [0.0, 0.0], ("a", "list"): [0.0, 0.0]}
    last: dict = {}
    bench._count(spent, "a", last, (1.0, 1.0), None)  # a warming call: not counted
    bench._count(spent, "a", last, (2.0, 1.5), "full")
    bench._count(spent, "a", last, (2.5, 3.5), "list")
    bench._count(spent, "a", last, (3.0, 4.0), "full")
    bench._count(spent, "a", last, (3.25, 4.5), None)  # the final reading
    assert spent == {("a", "full"): [0.75, 2.5], ("a", "list"): [0.5, 0.5]}
    bench._count(spent, "a", last, None, "list")
    bench._count(spent, "a", last, (4.0, 5.0), None)
    assert spent[("a", "list")] is None and spent[("a", "full")] == [0.75, 2.5]
