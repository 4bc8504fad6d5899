"""Smoke test of a plain install: ``pip install .`` (no extras) into a clean virtual
environment, then the installed ``ra`` as a new user runs it.

The test suite runs in the dev environment, which has more than a plain install (NumPy
comes with rank-bm25, for one), so a module that ra imports but does not declare passes
there and fails for users. This script is what catches it: ``make test`` (and so CI) runs
it. pip's cache is reused; the only network it may use is the package registry.

Usage: python3 tests/smoke_install.py [VENV_DIR]   (default: .venv-smoke, recreated)
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TIMEOUT = 120  # seconds for any one command of the smoke


def sh(argv: list[str], cwd: Path, env: dict, expect: int = 0, stdin: str | None = None
       ) -> str:
    proc = subprocess.run(argv, cwd=cwd, env=env, input=stdin, capture_output=True,
                          text=True, timeout=TIMEOUT)
    if proc.returncode != expect:
        sys.exit(f"smoke: {' '.join(argv)} exited {proc.returncode} (expected {expect})\n"
                 f"stdout: {proc.stdout[-1500:]}\nstderr: {proc.stderr[-3000:]}")
    return proc.stdout


def install(venv: Path) -> Path:
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q",
           "--disable-pip-version-check"]
    done = subprocess.run([*pip, str(REPO)], capture_output=True, text=True, timeout=900)
    if done.returncode:
        sys.exit(f"smoke: pip install . failed:\n{done.stdout[-2000:]}{done.stderr[-4000:]}")
    return venv / "bin" / "ra"


def mcp_call(ra: Path, cwd: Path, env: dict, tool: str, arguments: dict) -> dict:
    """One tool call over stdio, newline-delimited JSON-RPC as an MCP client sends it."""
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "smoke", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": tool, "arguments": arguments}},
    ]
    proc = subprocess.Popen([str(ra), "mcp"], cwd=cwd, env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for message in messages:
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
            if "id" in message:
                reply = _reply(proc, message["id"])
        return reply
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _reply(proc: subprocess.Popen, id_: int) -> dict:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            sys.exit(f"smoke: ra mcp closed its output: {proc.stderr.read()[-3000:]}")
        data = json.loads(line)
        if data.get("id") == id_:
            return data
    sys.exit("smoke: no MCP reply in time")


def smoke(ra: Path, root: Path) -> None:
    env = {"HOME": str(root / "home"), "PATH": f"{ra.parent}:/usr/bin:/bin",
           "RA_DAEMON": "0", "NO_COLOR": "1", "LANG": "C.UTF-8"}
    (root / "home").mkdir()
    project = root / "project"
    (project / "notes").mkdir(parents=True)
    (project / "notes" / "guide.md").write_text(
        "# Guide\n\nHow to configure the widget.\n\n## Errors\n\nRetry with backoff.\n")
    for i in range(3):
        (project / "notes" / f"n{i}.md").write_text(f"# Note {i}\n\nplain text {i}\n")
    sh([str(ra), "init"], project, env)
    toml = project / ".ra.toml"
    toml.write_text('[tree.notes]\npath = "./notes"\n')
    sh([str(ra), "update"], project, env)
    (project / "notes" / "guide.md").write_text(
        "# Guide\n\nHow to configure the gizmo.\n\n## Errors\n\nRetry with backoff.\n")
    out = sh([str(ra), "search", "gizmo", "--json"], project, env)
    assert json.loads(out)["queries"][0]["results"][0]["path"] == "guide.md", out
    out = sh([str(ra), "search", "widget"], project, env)
    assert out.startswith("no results"), out  # the old text is gone
    out = sh([str(ra), "context", "notes/guide.md"], project, env)
    assert "notes:" in out, out
    out = sh([str(ra), "get", "notes:guide.md#errors"], project, env)
    assert "Retry with backoff." in out, out
    out = sh([str(ra), "ls", "docs"], project, env)
    assert "guide.md" in out, out
    reply = mcp_call(ra, project, env, "search", {"queries": "backoff"})
    result = reply.get("result", {})
    assert not result.get("isError"), reply
    assert "Retry with backoff." in json.dumps(result), reply


def main(argv: list[str]) -> int:
    venv = Path(argv[0]).resolve() if argv else REPO / ".venv-smoke"
    start = time.monotonic()
    ra = install(venv)
    with tempfile.TemporaryDirectory(prefix="ra-smoke-") as tmp:
        smoke(ra, Path(tmp))
    print(f"smoke: plain install of ra works ({time.monotonic() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
