"""``ra daemon start|stop|status``: the warm process that answers reading commands
(``ra.serve.daemon``), through ``ra.cli.daemon_client``."""

from __future__ import annotations

import time

import typer

from ra.cli import output
from ra.cli.common import write_output
from ra.query import render

daemon_app = typer.Typer(help="""Keep ra warm in the background for fast CLI answers.

While a daemon runs, `ra search`, `ra context`, `ra get` and `ra ls` are answered by it
(same output, same freshness: changed files are indexed before it answers) without
paying for a fresh process. It serves this user only, stops by itself after --idle
seconds without requests, and steps aside when ra is upgraded. RA_DAEMON=0 bypasses it.

When none runs, those commands answer in their own process and start one (idle for
[daemon] idle_minutes, 15 by default); RA_DAEMON_AUTOSTART=0 or [daemon] autostart =
false in .ra.toml prevent that.

Examples:

  ra daemon start

  ra daemon status --json

  ra daemon stop
""", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(daemon_app, name="daemon")


@daemon_app.command("start", help="Start the daemon (no-op when one is running).\n\n"
                    "Example: ra daemon start --idle 3600")
def start(idle: float = typer.Option(1800.0, "--idle", min=1.0,
                                     help="Stop after this many seconds without requests."),
          ) -> None:
    from ra.cli import daemon_client as daemon
    from ra.errors import RaError

    status = daemon.ask("status", timeout=1.0)
    if status is None:
        try:
            status = daemon.start(idle)
        except RuntimeError as exc:
            raise RaError(f"ra daemon: {exc}") from None
        write_output(f"ra daemon started (pid {status['pid']}), listening on "
                     f"{daemon.socket_file()}\n")
    else:
        write_output(f"ra daemon already running (pid {status['pid']})\n")


@daemon_app.command("stop", help="Stop the daemon.\n\nExample: ra daemon stop")
def stop() -> None:
    from ra.cli import daemon_client as daemon

    reply = daemon.ask("stop")
    if reply is None:
        output.note("no ra daemon is running")
        return
    write_output(f"ra daemon stopped (pid {reply['stopped']})\n")


@daemon_app.command("status", help="Say whether a daemon runs, and what it holds.\n\n"
                    "Example: ra daemon status --json")
def status(json_: bool = typer.Option(False, "--json", help="JSON output.")) -> None:
    from ra.cli import daemon_client as daemon

    info = daemon.ask("status")
    starting = info is None and daemon.starting()
    if json_:
        write_output(render.dumps({"running": info is not None, "starting": starting,
                                   **(info or {})}) + "\n")
        return
    if info is None:
        write_output("ra daemon starting: it opens an index, then listens\n" if starting
                     else "no ra daemon is running\n")
        raise typer.Exit(1)
    uptime = time.time() - info["started"]
    lines = [f"ra daemon pid {info['pid']}, up {uptime:.0f} s, {info['requests']} requests, "
             f"peak memory {info['peak_rss_mb']} MB"]
    lines += [f"  index {i['index_dir']}" for i in info["indexes"]]
    write_output("\n".join(lines) + "\n")
