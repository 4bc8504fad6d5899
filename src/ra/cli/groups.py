"""Command groups whose error for an unknown command says what was meant.

click suggests only names spelled like a command (``serch`` → ``search``); a ``hint``
also knows what a new user types instead: another tool's name for a command (``ra
index``), a file where a subcommand goes (``ra inspect docs/guide.md``).
"""

from __future__ import annotations

from typer.core import TyperGroup


class HintingGroup(TyperGroup):
    """A group whose "No such command" error ends with ``hint``'s suggestion, when click
    made none."""

    def hint(self, name: str) -> str | None:  # pragma: no cover - overridden
        return None

    def resolve_command(self, ctx, args):
        try:
            return super().resolve_command(ctx, args)
        except Exception as exc:  # click's UsageError (typer's own copy of click, or click)
            message = getattr(exc, "message", None)
            meant = self.hint(args[0]) if args else None
            if meant and isinstance(message, str) and "Did you mean" not in message:
                exc.message = f"{message.rstrip('.')}. Did you mean {meant}?"
            raise
