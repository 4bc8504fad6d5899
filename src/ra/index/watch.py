"""What a long-lived reader watches, and what each inotify event means for it.

``plan_watches`` lists, for one configuration, every path to watch with inotify: every
folder the discovery walk reads (``walk_tree``), the folders where a ``.ra.toml`` lives
or may appear (every folder above the working folder, and the home folder), the
configuration files themselves, the index folder (for its ``CURRENT`` pointer), the
nearest existing folder above a tree or index that does not exist yet, and the folders
where symlinked files point. ``Watcher`` keeps exactly those watches and turns the
queued events into what the next update must do (``FILES``, ``FOLDERS``, ``CONFIG``,
``GENERATION``), without waiting when there is none.

An event says *whether* to check: a name the walk skips (dot names) or no tree selects
is nothing, anything else asks for the freshness check. A misjudged event therefore costs
a check, never a stale answer, and a full queue (``IN_Q_OVERFLOW``) asks for everything.
Events about files in a tree's folders also say *which* files: ``Watcher.keys`` collects
their ``tree:path``, so that the check may stat those alone (``ra.index.freshness.Hint``). Any
other event that asks for a check of files (a folder, a symlink, a watched file or
folder itself going, a full queue) makes ``keys`` None: the whole walk, as before.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ra.store.generations import CURRENT

# What an event asks of the next update (bit flags).
FILES = 1  # files may have changed: compare fingerprints
FOLDERS = 2  # folders appeared or vanished: re-sync the watches
CONFIG = 4  # a configuration file changed: read the configuration again
GENERATION = 8  # the CURRENT pointer moved: compare it with the held reader
EVERYTHING = FILES | FOLDERS | CONFIG | GENERATION

# inotify's event bits (linux/inotify.h), kept here so that importing this module does
# not load ctypes; ``inotify_simple`` is imported when watching starts.
MODIFY, ATTRIB, MOVED_FROM, MOVED_TO = 0x2, 0x4, 0x40, 0x80
CREATE, DELETE, DELETE_SELF, MOVE_SELF = 0x100, 0x200, 0x400, 0x800
UNMOUNT, Q_OVERFLOW, IGNORED = 0x2000, 0x4000, 0x8000
ONLYDIR, MASK_ADD, ISDIR = 0x1000000, 0x20000000, 0x40000000
SELF = DELETE_SELF | MOVE_SELF | UNMOUNT | IGNORED
#: A folder whose entries matter: any change of an entry, or of the folder itself.
FOLDER_MASK = (MODIFY | ATTRIB | CREATE | DELETE | MOVED_FROM | MOVED_TO | DELETE_SELF
               | MOVE_SELF | ONLYDIR)
#: A folder where only a new entry matters (a ``.ra.toml`` appearing above the project).
APPEAR_MASK = CREATE | MOVED_TO | DELETE_SELF | MOVE_SELF | ONLYDIR
#: A file watched itself (through any symlink): its content, metadata or its going.
FILE_MASK = MODIFY | ATTRIB | DELETE_SELF | MOVE_SELF

# --- what a watch is for --------------------------------------------------------------------

@dataclass(frozen=True)
class _Folder:
    """A folder of a tree: an entry's event counts when the tree would index the entry."""

    tree: object  # ra.config.settings.Tree
    rel: str  # the folder, relative to the tree root ("" for the root)
    path: str


@dataclass(frozen=True)
class _Names:
    """A folder where only events about ``names`` count (and about the folder itself)."""

    names: frozenset[str]
    effect: int


@dataclass(frozen=True)
class _File:
    """A file watched itself: every event counts."""

    effect: int


def _effect(role, mask: int, name: str) -> int:
    """What one event means for the next update, seen from one role of its watch."""
    if mask & SELF:  # the watched thing itself went: watch again, and check
        return FOLDERS | FILES | getattr(role, "effect", 0)
    if isinstance(role, _File):
        return role.effect
    if isinstance(role, _Names):
        return role.effect if name in role.names else 0
    if not name or name.startswith(".") and name not in role.tree.dot_names:
        return 0  # the walk skips dot names no include spells out
    if mask & ISDIR:
        return FOLDERS | FILES
    if not role.tree.matches(f"{role.rel}/{name}" if role.rel else name):
        return 0
    if mask & (CREATE | MOVED_TO) and os.path.islink(os.path.join(role.path, name)):
        return FOLDERS | FILES  # a new symlink: watch where it points
    return FILES


# --- the watches -----------------------------------------------------------------------------

Plan = dict[str, tuple[int, list]]  # path -> (mask, roles)


def plan_watches(config, cwd: Path | None, home: Path | None = None) -> Plan:
    """Every path to watch for ``config`` seen from ``cwd``, with its mask and roles."""
    from ra.config.settings import CONFIG_NAME, global_config_path

    plan: Plan = {}

    def want(path, mask: int, role) -> None:
        old_mask, roles = plan.get(str(path), (0, []))
        plan[str(path)] = (old_mask | mask, [*roles, role])

    config_dirs = {f.parent for f in config.files}
    if cwd is not None:  # discovery looks in every folder above cwd, and at ~/.ra.toml
        start = Path(cwd).resolve()
        config_dirs |= {start, *start.parents, global_config_path(home).parent}
    for folder in config_dirs:
        has_file = (folder / CONFIG_NAME) in config.files
        want(folder, FOLDER_MASK if has_file else APPEAR_MASK,
             _Names(frozenset({CONFIG_NAME}), CONFIG))
    for path in config.files:
        want(path, FILE_MASK, _File(CONFIG))
    for tree in config.trees:
        _plan_tree(want, tree)
    if config.index_dir is not None:
        _anchor(want, config.index_dir, FOLDERS | GENERATION)
        if config.index_dir.is_dir():
            want(config.index_dir, FOLDER_MASK, _Names(frozenset({CURRENT}), GENERATION))
    return plan


def _plan_tree(want: Callable, tree) -> None:
    from ra.pipeline.discover import excluded_folders, walk_tree

    def folder(rel: str, path: str, entries: list) -> None:
        want(path, FOLDER_MASK, _Folder(tree, rel, path))
        for entry in entries:
            if entry.is_symlink() and not tree.hidden(entry.name) and tree.matches(
                    f"{rel}/{entry.name}" if rel else entry.name):
                for target in link_targets(entry.path):
                    _anchor(want, Path(target), FILES)

    _anchor(want, Path(tree.path), FOLDERS | FILES)
    for _ in walk_tree(tree.path, folder, excluded_folders(tree.exclude),  # not node_modules
                       tree.dot_names):
        pass


def _anchor(want: Callable, path: Path, effect: int) -> None:
    """Watch the nearest existing folder above ``path`` for the next name towards it, so
    that ``path`` appearing, changing or going is seen."""
    for parent in path.parents:
        if parent.is_dir():
            want(parent, FOLDER_MASK, _Names(frozenset({path.relative_to(parent).parts[0]}),
                                             effect))
            return


def link_targets(path: str) -> list[str]:
    """Each path a chain of symlinks passes through after ``path``, to the final target
    (folders resolved), so that watching each one's folder sees the chain change."""
    out: list[str] = []
    for _ in range(40):  # the kernel's own limit on nested links
        try:
            target = os.readlink(path)
        except OSError:
            break
        step = os.path.join(os.path.dirname(path), target)
        path = os.path.join(os.path.realpath(os.path.dirname(step)), os.path.basename(step))
        out.append(path)
    return out


class Watcher:
    """One inotify instance and what each of its watches is for."""

    def __init__(self) -> None:
        from inotify_simple import INotify

        self.inotify = INotify()
        self.roles: dict[int, list] = {}
        self.overflows = 0
        #: ``tree:path`` of the files the drained events were about, since the last
        #: ``take_keys``; None when some event asked for a check it cannot name.
        self.keys: set[str] | None = set()

    def sync(self, plan: Plan) -> int:
        """Watch exactly the paths of ``plan``. Returns FOLDERS | FILES when a path
        vanished meanwhile (the next update plans again); raises OSError when a path
        cannot be watched (the watch limit, permissions): the caller stops watching."""
        roles: dict[int, list] = {}
        effects = 0
        for path, (mask, wanted) in plan.items():
            try:  # MASK_ADD: two paths of one folder (a bind mount) share a watch
                wd = self.inotify.add_watch(path, mask | MASK_ADD)
            except OSError as exc:
                if exc.errno not in (errno.ENOENT, errno.ENOTDIR):
                    raise OSError(exc.errno, f"cannot watch {path}: {exc.strerror}") from None
                effects |= FOLDERS | FILES
                continue
            roles.setdefault(wd, []).extend(wanted)
        for wd in self.roles.keys() - roles.keys():
            with contextlib.suppress(OSError):  # already gone with its folder
                self.inotify.rm_watch(wd)
        self.roles = roles
        return effects

    def drain(self) -> int:
        """What the queued events ask of the next update, without waiting for any."""
        effects = 0
        for event in self.inotify.read(timeout=0):
            if event.mask & Q_OVERFLOW:
                self.overflows += 1
                effects |= EVERYTHING
                self.keys = None
                continue
            for role in self.roles.get(event.wd, ()):
                effect = _effect(role, event.mask, event.name)
                effects |= effect
                if effect & FILES and self.keys is not None:
                    if effect == FILES and isinstance(role, _Folder):  # one named file
                        rel = f"{role.rel}/{event.name}" if role.rel else event.name
                        self.keys.add(f"{role.tree.name}:{rel}")
                    else:
                        self.keys = None
            if event.mask & IGNORED:
                self.roles.pop(event.wd, None)
        return effects

    def take_keys(self) -> set[str] | None:
        """``keys``, collected since the last call; collecting starts over."""
        keys, self.keys = self.keys, set()
        return keys

    def close(self) -> None:
        self.inotify.close()
