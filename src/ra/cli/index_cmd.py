"""Commands about configuration and the index: init, config, update, status, check."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

import typer

from ra.cli import output
from ra.cli.common import load, progress_bar, write_file, write_output
from ra.query import render
from ra.text import is_markdown


def register(app: typer.Typer) -> None:
    app.command("init", help=INIT_HELP)(init)
    app.command("config", help="Print the effective merged configuration as TOML.\n\n"
                "Example: ra config")(config_cmd)
    app.command("update", help="Rebuild the whole index now.\n\nExample: ra update")(update)
    app.command("status", help="Configuration files, trees, and the index's state.\n\n"
                "Examples: ra status; ra status --json")(status)
    app.command("check", help=CHECK_HELP)(check)


INIT_HELP = """Create a starter .ra.toml (with commented examples) in this folder.

Its tree is the folder that holds this project's markdown (docs/ in most projects);
check it, or add trees of your own. Coding agents' rule and skill folders
(.cursor/rules, .claude/rules, .claude/skills, .agents/skills, .github/instructions, ...)
that hold markdown become trees of their own. Notes written in another language than
English get its stemmer ([search] stemmer); a site's translations (de/, pt-br/, ...
mirroring its pages), its docs' older versions (versioned_docs/) and what git ignores
(*.egg-info/, build output) are excluded.

Examples:

  ra init

  ra init --global      (writes ~/.ra.toml)
"""

CHECK_HELP = """Validate configuration, trees, files and the index.

Exit code 0 when all is well, 1 with warnings, 2 with errors.

Example: ra check
"""

#: The starter's lines saying what a tree includes by default (``ra init`` replaces them
#: when the pages include hidden folders: ``_includes``)
_DEFAULT_INCLUDE_LINES = """\
# include = ["**/*.md", "**/*.markdown", "**/*.mdx", "**/*.mdoc", "**/*.qmd", "**/*.Rmd",
#            "**/*.rmd", "**/*.mdc", "**/*.txt"]   # the default
"""

STARTER = """\
# ra configuration. `ra config` prints the effective settings, `ra check` validates them,
# `ra --help` lists the commands. Trees are named folders of markdown and text files.

[tree.docs]
path = "./docs"
""" + _DEFAULT_INCLUDE_LINES + """\
# exclude = ["**/drafts/**"]

# [settings]
# default_limit = 5          # results per topic
# local_boost = 1.5          # score multiplier for trees not from ~/.ra.toml
# chunk_at_headings = true   # one chunk per heading (false: one per file)
# max_chunk_size = 50000     # warn about chunks longer than this (characters)
# index_dir = ".ra/index"    # where the index lives

# [search]
# fuzzy = true               # typo tolerance for words longer than 4 characters
# fuzzy_distance = 1         # edits allowed (0-2)
# stemmer = "english"
# candidate_limit = 100
# cutoff_ratio = 0.5         # elbow: stop where the score drops below this ratio
# aggregation_threshold = 0.75
# long_query_words = 6       # from this many words a query is ranked, not filtered
# fill = true                # too few chunks hold every word: those holding most follow
# coordination = 1.0         # how much a chunk missing some of those words loses
# max_tokens = 4000          # token budget of search/context/get without --max-tokens (0: none)

# [context]
# limit = 10
# terms = 15

# [mcp]
# max_tokens = 4000          # token budget of the MCP tools when the agent gives none

# [daemon]
# autostart = true           # search/context/get/ls start `ra daemon` for the next calls

# [semantic]                 # meaning as well as words: pip install 'ra[semantic]'
# enabled = true
# model = "all-MiniLM-L6-v2" # or a local model folder
# weight = 0.2               # share of meaning in the fused score

# [[context.rules]]
# match = "src/api/**"
# terms = ["http", "routing"]
# include = ["docs:api/overview.md"]
"""

GLOBAL_STARTER = STARTER.replace('path = "./docs"', 'path = "~/docs"')


def init(
    global_: bool = typer.Option(False, "--global", help="Write ~/.ra.toml instead."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing file."),
) -> None:
    target = (Path.home() if global_ else Path.cwd()) / ".ra.toml"
    if not global_ and Path.cwd().resolve() == Path.home().resolve():
        # ~/.ra.toml is the global configuration: a tree "." there is the whole home
        # folder, walked and searched from every project
        output.error(RuntimeError(
            f"{Path.cwd()} is your home folder, and {target} is the global configuration, "
            "whose trees every project searches: run `ra init` in a project's folder, or "
            "`ra init --global` for a global tree of notes (~/docs; edit its path)"))
        raise typer.Exit(1)
    if target.exists() and not force:
        output.error(FileExistsError(f"{target} exists; use --force to overwrite it"))
        raise typer.Exit(1)
    if global_:
        write_file(target, GLOBAL_STARTER)
        output.note(f"wrote {target}")
        return
    from ra.text.languages import said

    folder, found, left_out, outside = notes_folder(Path.cwd())
    translated = translations(Path.cwd() / folder) if found else []
    away = [pattern for pattern, _ in translated]
    found -= sum(n for _, n in translated)
    older = older_versions(Path.cwd() / folder, away) if found else []
    found -= sum(n for _, n in older)
    ignored = ignored_by_git(Path.cwd() / folder) if found else []
    found -= sum(1 for p in ignored if p.endswith("**")
                 for _ in _markdown_files(Path.cwd() / folder / p.removesuffix("**")))
    found -= sum(1 for p in ignored if is_markdown(p))
    boiler = boilerplate(Path.cwd() / folder) if found else {}
    found -= sum(n for name, n in boiler.items() if is_markdown(name))
    hidden = included_hidden(Path.cwd() / folder) if found else []
    found += sum(n for _, n in hidden)
    starter = STARTER.replace('path = "./docs"', f"path = {json.dumps(folder)}")
    if hidden:
        starter = starter.replace(_DEFAULT_INCLUDE_LINES, _includes(
            [where for where, _ in hidden]), 1)
    if left_out or translated or ignored or older or boiler:
        starter = starter.replace('# exclude = ["**/drafts/**"]\n', _excludes(
            left_out, away, ignored, [pattern for pattern, _ in older],
            [f"**/{name}" for name in boiler]))
    language = notes_language(Path.cwd() / folder, away) if found else None
    if language not in (None, "english"):
        starter = starter.replace("\n# [search]\n", "\n[search]\n", 1).replace(
            '# stemmer = "english"\n', f'stemmer = "{language}"  # the notes\' language, '
            'read by ra init (the default: "english")\n', 1)
    rules = rule_folders(Path.cwd())
    if rules:
        trees = "\n".join(_rule_tree(name, path) for name, path, _ in rules)
        starter = starter.replace("\n# [settings]", "\n# agent rule files: `ra context FILE` "
                                  "puts those whose front matter names FILE first\n"
                                  f"{trees}\n# [settings]", 1)
    write_file(target, starter)
    if found:
        skipped = "; left out: " + ", ".join(n if "*" in n else f"{n}/"
                                             for n in left_out) if left_out else ""
        if translated:
            skipped += (f"; translations left out: {said(away)} "
                        f"({render.plural(sum(n for _, n in translated), 'file')})")
        if older:
            skipped += (f"; older versions left out: "
                        f"{', '.join(p.removesuffix('**') for p, _ in older)} "
                        f"({render.plural(sum(n for _, n in older), 'file')})")
        if ignored:
            skipped += "; ignored by git: " + ", ".join(
                p.removesuffix("**") for p in ignored)
        if hidden:
            skipped += "; hidden folders its pages include: " + ", ".join(
                f"{where}/ ({render.plural(n, 'file')})" for where, n in hidden)
        if boiler:
            skipped += "; licenses and site files: " + ", ".join(
                f"{name} ({n})" if n > 1 else name for name, n in boiler.items())
        if outside:
            skipped += outside_note(outside)
        output.note(f"wrote {target}: tree docs is {folder} "
                    f"({render.plural(found, 'markdown file')}{skipped})")
    else:
        output.note(f"wrote {target}; no markdown files here yet: point [tree.docs] path "
                    "at the folder of your notes")
    if language not in (None, "english"):
        output.note(f"the notes are in {language.capitalize()}: [search] stemmer is "
                    f"{json.dumps(language)}")
    if rules:
        output.note("agent rules: " + ", ".join(
            f"tree {name} is {path} ({render.plural(n, 'file')})" for name, path, n in rules)
            + "; `ra context FILE` puts the rules whose front matter names FILE first")
    gitignore = _gitignore_index(Path.cwd())
    if gitignore:
        output.note(f"added .ra/ to {gitignore}")


def _rule_tree(name: str, path: str) -> str:
    """The starter's table of a ``rule_folders`` folder, or of a file alone in its folder."""
    folder, _, file = path.rpartition("/")
    if is_markdown(file) and (name, folder.removeprefix("./"), file) in RULE_FILES:
        return f'[tree.{name}]\npath = "{folder}"\ninclude = ["{file}"]\n'
    return f'[tree.{name}]\npath = "{path}"\n'


def _excluded(name: str) -> str:
    """The exclude pattern of a folder ``notes_folder`` leaves out: a folder's name
    anywhere, or the pattern it gives (``**/tests/**/*.txt``)."""
    return name if "*" in name else f"**/{name}/**"


def _excludes(left_out: list[str], translated: list[str], ignored: list[str] = (),
              older: list[str] = (), boiler: list[str] = ()) -> str:
    """The starter's ``exclude``: dependency and build folders by name anywhere (one line
    when they are all), the translations and older versions by their path in the tree,
    what git ignores there, and licenses and site files by name anywhere."""
    patterns = ([_excluded(name) for name in left_out], translated,
                list(older),
                list(ignored), list(boiler))
    whys = ("dependencies, build output and test data: not notes", "translations of these pages",
            "older versions of these pages", "ignored by git: generated, not written",
            "licenses and site files: not notes")
    if not translated and not ignored and not older and not boiler:
        return f"exclude = [{', '.join(map(json.dumps, patterns[0]))}]  # {whys[0]}\n"
    lines: list[str] = []
    for group, why in zip(patterns, whys, strict=True):
        if group:
            lines.append(f"    # {why}")
            for quoted in map(json.dumps, group):  # wrapped at 88 characters
                if len(lines[-1]) + len(quoted) + 2 > 88 or lines[-1].startswith("    #"):
                    lines.append("   ")
                lines[-1] += f" {quoted},"
    return "exclude = [\n" + "\n".join(lines) + "\n]\n"


#: Files a tree would index that are no notes: licenses and notices (awesome-copilot's
#: skills hold 17 ``LICENSE.txt`` and 27 font licences, ``OFL.txt``: "redistribution of
#: fonts" gave only those), a site's ``robots.txt`` and ``humans.txt`` (GOV.UK's developer
#: docs: a document "robots"), named in capitals as such files are (``LICENSE-MIT.md``),
#: and a site's navigation: Docsify's ``_sidebar.md``, ``_navbar.md`` and
#: ``_coverpage.md``, a GitHub wiki's ``_Sidebar.md`` and ``_Footer.md`` (lists of every
#: page's title: Docsify's ``_sidebar`` came 3rd for "how to add a sidebar", ``_navbar``
#: for "translation fallback languages"). Not a page on them (uv's
#: ``policies/license.md``, "uv is licensed under either of …"; ``license_keys.md``,
#: Zola's ``robots.md``, Docsify's ``more-pages.md`` on writing a sidebar)
BOILERPLATE = re.compile(r"(?:LICEN[CS]E|COPYING|NOTICES?|THIRD[-_]PARTY[-_]NOTICES?"
                         r"|ThirdPartyNotices|OFL)(?:-[A-Z0-9][A-Z0-9.-]*)?\.(?i:md|markdown|txt)"
                         r"|(?:robots|humans)\.txt"
                         r"|_(?i:sidebar|navbar|coverpage|footer)\.md")


def boilerplate(folder: Path) -> dict[str, int]:
    """The names of the ``BOILERPLATE`` files under ``folder`` as a tree walks it (no
    hidden folders, no ``NOT_NOTES``), and how many of each, sorted by name."""
    from ra.config.settings import NOT_NOTES

    found: Counter[str] = Counter(
        os.path.basename(f) for f in _markdown_files(folder, NOT_NOTES, text=True)
        if BOILERPLATE.fullmatch(os.path.basename(f)))
    return dict(sorted(found.items()))


#: The share of the markdown files in subfolders that a folder must hold for ``ra init``
#: to name it rather than its parent.
NOTES_SHARE = 0.8


def notes_folder(cwd: Path) -> tuple[str, int, list[str], list[Path]]:
    """The folder ``ra init`` names as the tree, how many markdown files it holds, the
    names of the dependency and build folders under it that hold some, and the markdown
    files outside it (not in tests, dependencies or hidden folders), which ``ra init``
    names so that a user can add a tree for those that are notes (Swift's evolution
    repository: ``proposals/``, and beside it ``process.md``, ``commonly_proposed.md``
    and ``visions/``).

    Files at the top (README, CHANGELOG) say little about where notes are kept; from the
    top, it goes down into the subfolder holding at least ``NOTES_SHARE`` of the others
    while the folder it is in holds none of its own (``docs/`` in most projects,
    ``src/content/docs/en`` in an Astro site); ``.`` when they are spread out, and
    ``("./docs", 0, [])`` when there are none. Hidden folders, dependencies, build
    output and test data (``ra.config.settings.NOT_NOTES``) are not counted, nor are
    folders of tests (``is_tests``) when the folder is chosen; those of the former under
    the folder named are looked into until their first markdown file, since a tree there
    would index them (a JavaScript project's ``node_modules`` holds a README and a
    CHANGELOG per package), so ``ra init`` excludes them; so are folders of tests that
    hold snapshots (``SNAPSHOTS``) and markdown: the pages a formatter's tests format
    (Prettier's ``tests/format/``, 313 of its 403 markdown files; a copy of its options
    page came 6th for "trailingComma default changed to all"), and a package's resources
    beside its sources (``RESOURCES``), counted as tests are; and the text files in
    folders of tests (``**/test/**/*.txt``: uv's requirements files to resolve, which
    "black formatter version pin" gave first)."""
    from ra.config.globs import glob_set
    from ra.config.settings import NOT_NOTES, is_tests
    from ra.text.languages import TRANSLATION_FOLDERS
    from ra.text.languages import translations as mirrored

    pruned: list[Path] = []  # the NOT_NOTES folders the walk left out
    found: list[Path] = []  # every markdown file counted
    inputs: set[Path] = set()  # folders of tests holding snapshots: their pages are inputs
    data: set[Path] = set()  # a package's resources beside its sources: program data
    texts: set[Path] = set()  # folders of tests holding text files: their inputs
    for top, folders, files in os.walk(cwd):
        rel = Path(top).relative_to(cwd)
        folders[:] = [f for f in folders if not f.startswith(".")]
        pruned += [rel / f for f in folders if f in NOT_NOTES]
        if SNAPSHOTS in folders:
            inputs.update(p for p in (rel, *rel.parents) if p.name and is_tests(p.name))
        if RESOURCES in folders and SOURCES in folders:
            data.add(rel / RESOURCES)
        folders[:] = [f for f in folders if f not in NOT_NOTES]
        found += [rel / f for f in files if is_markdown(f) and not f.startswith(".")]
        if any(f.lower().endswith(".txt") and not f.startswith(".") for f in files):
            texts.update(p for p in (rel, *rel.parents) if p.name and is_tests(p.name))
    if not found:
        return "./docs", 0, [], []
    # pages named for a language (README-ja.md, cot.jp.mdx) weigh nothing, and those in a
    # folder of translations of the pages above it count for nothing:
    # coding-interview-university's translations/ held 30 READMEs to the one at the top
    # (folders named for a language stay counted: ``content/`` of a Hugo site holds
    # ``en/`` and its translations, and is named with those excluded)
    away = glob_set(tuple(p for p, _ in mirrored(p.as_posix() for p in found)
                          if p.startswith("**/"))).matches
    within: Counter[Path] = Counter()  # markdown files in each folder and below it
    own: Counter[Path] = Counter()
    tested: Counter[Path] = Counter()  # of those, the ones in a folder of tests
    size: Counter[Path] = Counter()  # the bytes of those not named for a language
    for path in found:
        translated = away(path.as_posix())
        if translated and TRANSLATION_FOLDERS.intersection(
                p.lower() for p in path.parent.parts):
            continue
        rel = path.parent
        in_tests = any(map(is_tests, rel.parts)) or any(p in data for p in (rel, *rel.parents))
        own[rel] += 1
        if not translated:
            with contextlib.suppress(OSError):
                size[path] = (cwd / path).stat().st_size
        for folder in (rel, *rel.parents):
            within[folder] += 1
            tested[folder] += in_tests
    top = Path(".")
    # the folder is chosen by the notes outside tests (but by all, when all are there)
    counted = within if tested[top] == within[top] else within - tested
    below = counted[top] - own[top]
    folder = top
    while folder == top or not own[folder]:
        children = [f for f in counted if f != top and f.parent == folder]
        best = max(children, key=lambda f: (counted[f], f.name == "docs"), default=None)
        if best is None or counted[best] < NOTES_SHARE * below:
            break
        folder = best
    if folder != top and _top_is_notes(size, folder):
        folder = top
    def held(path: Path) -> bool:  # under the folder named, holding what a tree indexes
        return ((folder == top or folder in path.parents)
                and _holds_markdown(cwd / path, text=True))  # .txt too

    left_out: set[str] = set()
    for path in [*pruned, *sorted(inputs)]:
        if path.name not in left_out and held(path):
            left_out.add(path.name)
    for path in sorted(data):  # by its package's name too: a notes folder may be resources/
        if held(path):
            left_out.add(path.relative_to(path.parent.parent).as_posix())
    for path in sorted(texts):  # a test's requirements files, expected output: the text
        if held(path):  # files only (its README stays)
            left_out.add(f"**/{path.name}/**/*.txt")
    name = "." if folder == top else f"./{folder.as_posix()}"
    # what the tree will index: translations too, not what is left out (Prettier's
    # tests/ held 297 of the 401 markdown files, and init said 401)
    excluded = glob_set(tuple(map(_excluded, left_out))).matches
    held = sum(1 for p in found if (folder == top or folder in p.parents) and not excluded(
        (p if folder == top else p.relative_to(folder)).as_posix()))
    outside = [] if folder == top else [
        p for p in found if folder not in p.parents and not any(map(is_tests, p.parts[:-1]))
        and not away(p.as_posix())]
    return name, held, sorted(left_out), sorted(outside)


#: Jest's folder of a test's expected output, beside the inputs it was made from
SNAPSHOTS = "__snapshots__"
#: A package's ``resources/`` beside its ``src/`` (a Rust crate's, a Maven module's) holds
#: what its code reads, its tests' inputs among them: ruff's ``crates/ty_python_semantic/
#: resources/mdtest/`` holds 487 markdown files of type-checker tests, and ``ra init``
#: named ``./crates`` as the notes, leaving ``docs/`` and ``CONTRIBUTING.md`` outside
RESOURCES, SOURCES = "resources", "src"


#: The share of the chosen folder's bytes that the markdown at the top (not its
#: changelog, license or contributing guide) must reach for ``ra init`` to name the top:
#: a README that is the notes (the System Design Primer's, 110 KB, beside eight solutions
#: of 135 KB in ``solutions/system_design/``).
TOP_SHARE = 0.5
#: Files at the top that are about the project, not notes (their stems, lowercase).
ABOUT_PROJECT = frozenset(
    "authors changelog changes code_of_conduct code-of-conduct codeowners contributing "
    "contributors governance history license maintainers news notice releases security "
    "support".split())


def _top_is_notes(size: Counter[Path], folder: Path) -> bool:
    """Whether the markdown at the top (``ABOUT_PROJECT`` left out) weighs ``TOP_SHARE``
    of ``folder``'s at least, in bytes."""
    at_top = sum(n for p, n in size.items() if len(p.parts) == 1
                 and p.stem.lower() not in ABOUT_PROJECT)
    return at_top >= TOP_SHARE * sum(n for p, n in size.items() if folder in p.parents)


def outside_note(outside: list[Path], shown: int = 4) -> str:
    """``ra init``'s words for the markdown files outside the tree: how many, and the
    first few files or folders at the top that hold them, those holding most first."""
    tops = Counter(p.parts[0] + ("/" if len(p.parts) > 1 else "") for p in outside)
    ranked = sorted(tops, key=lambda t: (-tops[t], t.lower()))
    names = ", ".join(f"{t} {tops[t]}" if tops[t] > 1 else t for t in ranked[:shown])
    names += ", …" if len(ranked) > shown else ""
    return (f"; outside it: {render.plural(len(outside), 'markdown file')} ({names}): add a "
            "tree for those that are notes")


#: Where coding agents keep rule files, whose front matter may name the files they apply
#: to (``globs``, ``paths``, ``applyTo``, ``fileMatchPattern``), and their skills
#: (``<name>/SKILL.md``, named and described in front matter: Claude Code's, and the
#: Agent Skills Codex and Copilot read from ``.agents/skills`` and ``.github/skills``): a
#: tree of its own each, as the walk skips hidden folders inside a tree. Tree name, folder.
RULE_FOLDERS = (("cursor", ".cursor/rules"), ("claude", ".claude/rules"),
                ("claude-skills", ".claude/skills"), ("claude-commands", ".claude/commands"),
                ("claude-agents", ".claude/agents"), ("agent-skills", ".agents/skills"),
                ("copilot-skills", ".github/skills"), ("copilot", ".github/instructions"),
                ("copilot-prompts", ".github/prompts"), ("copilot-agents", ".github/agents"),
                ("copilot-chatmodes", ".github/chatmodes"),
                ("windsurf", ".windsurf/rules"), ("kiro", ".kiro/steering"),
                ("cline", ".clinerules"), ("continue", ".continue/rules"),
                ("roo", ".roo/rules"), ("amazonq", ".amazonq/rules"))


#: Agents' instructions for the whole repository kept in a hidden folder, which a tree
#: of its own takes alone (tree name, folder, file): Copilot's, which awesome-copilot's
#: users write (a search for its rule found nothing)
RULE_FILES = (("copilot-repo", ".github", "copilot-instructions.md"),)


def rule_folders(cwd: Path) -> list[tuple[str, str, int]]:
    """``(tree name, folder, markdown files)`` of the agent rule folders (``RULE_FOLDERS``,
    and Roo Code's rules for one mode, ``.roo/rules-{mode}``: tree ``roo-{mode}``) in
    ``cwd`` that hold markdown (``.md``, Cursor's ``.mdc``); a ``RULE_FILES`` file that is
    there is ``(tree name, folder/file, 1)``."""
    folders = list(RULE_FOLDERS)
    with contextlib.suppress(OSError):
        at = folders.index(("roo", ".roo/rules")) + 1
        modes = sorted(e.name for e in os.scandir(cwd / ".roo")
                       if re.fullmatch(r"rules-[\w-]+", e.name)
                       and e.is_dir(follow_symlinks=False))
        folders[at:at] = [(f"roo-{m[len('rules-'):]}", f".roo/{m}") for m in modes]
    counts = ((name, rel, sum(1 for _ in _markdown_files(cwd / rel))) for name, rel in folders)
    return [(name, f"./{rel}", n) for name, rel, n in counts if n] + [
        (name, f"./{rel}/{file}", 1) for name, rel, file in RULE_FILES
        if (cwd / rel / file).is_file()]


def notes_language(folder: Path, translated: Iterable[str] = ()) -> str | None:
    """The language of the markdown under ``folder`` (``ra.pipeline.discover.language_of``
    of its files in the order of a sorted walk, dependencies and build output and the
    files the ``translated`` patterns match, relative to ``folder``, left out); None when
    they do not say."""
    from ra.config.globs import glob_set
    from ra.config.settings import NOT_NOTES
    from ra.pipeline.discover import language_of

    away = glob_set(tuple(translated)).matches
    return language_of(f for f in _markdown_files(folder, NOT_NOTES)
                       if not away(Path(f).relative_to(folder).as_posix()))


def translations(folder: Path) -> list[tuple[str, int]]:
    """``ra.text.languages.translations`` of the markdown under ``folder`` as a tree's walk
    finds it (dependencies and build output left out): ``(exclude pattern, files)``,
    relative to it."""
    from ra.config.settings import NOT_NOTES
    from ra.text.languages import translations as mirrored

    return mirrored(Path(f).relative_to(folder).as_posix()
                    for f in _markdown_files(folder, NOT_NOTES))


def older_versions(folder: Path, translated: Iterable[str] = ()) -> list[tuple[str, int]]:
    """``ra.pipeline.discover.older_versions`` of the markdown under ``folder`` as a tree's
    walk finds it, the files the ``translated`` patterns match left out."""
    from ra.config.globs import glob_set
    from ra.config.settings import NOT_NOTES
    from ra.pipeline.discover import older_versions as versioned

    away = glob_set(tuple(translated)).matches
    rels = (Path(f).relative_to(folder).as_posix() for f in _markdown_files(folder, NOT_NOTES))
    return versioned(rel for rel in rels if not away(rel))


def ignored_by_git(folder: Path) -> list[str]:
    """Exclude patterns, relative to ``folder``, of what git ignores there that a tree
    would index (``ra.pipeline.discover.git_ignored``): folders holding markdown or text
    files (``src/pkg.egg-info/**``: its ``SOURCES.txt`` and ``requires.txt``; a site's
    build output), and such files (``static/llms-full.txt``, generated at build time).
    Hidden folders, and dependencies and build output by name (``NOT_NOTES``), are left
    out otherwise. Empty outside a git repository, or without git."""
    from ra.config.settings import NOT_NOTES
    from ra.pipeline.discover import git_ignored

    out = []
    for entry in git_ignored(folder) or ():
        if any(p.startswith(".") or p in NOT_NOTES for p in entry.rstrip("/").split("/")):
            continue
        if entry.endswith("/"):
            if _holds_markdown(folder / entry, text=True):
                out.append(f"{entry}**")
        elif is_markdown(entry) or entry.lower().endswith(".txt"):
            out.append(entry)
    return out


#: A line that pulls another file into the page when the site is built: Svelte's
#: ``@include .generated/client-errors.md``, mdBook's ``{{#include file.md}}``, pymdownx
#: snippets' ``--8<-- "file.md"``
_INCLUDE_LINE = re.compile(r'^[ \t]*(?:@include[ \t]+(\S+)|\{\{#include[ \t]+([^}:\s]+)'
                           r'|-{2}8<-{2}[ \t]*"([^"]+)")', re.M)


def included_hidden(folder: Path) -> list[tuple[str, int]]:
    """The hidden folders under ``folder`` (a tree's walk skips them) whose markdown its
    pages include, by their path in the tree, with how many markdown files each holds:
    Svelte's reference pages are each a few ``@include .generated/client-errors.md``
    lines, and the errors and warnings they list (``state_unsafe_mutation``) were in no
    tree: every pasted error code found nothing."""
    found: dict[str, int] = {}
    root = folder.resolve()
    for page in _markdown_files(folder):
        try:
            text = Path(page).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if "include" not in text and "--8<--" not in text:
            continue
        for match in _INCLUDE_LINE.finditer(text):
            target = (Path(page).parent / next(g for g in match.groups() if g)).resolve()
            try:
                parts = target.relative_to(root).parts
            except ValueError:  # outside the tree
                continue
            hidden = next((i for i, part in enumerate(parts[:-1]) if part.startswith(".")),
                          None)
            if hidden is not None and is_markdown(parts[-1]) and target.is_file():
                where = "/".join(parts[:hidden + 1])
                if where not in found:
                    found[where] = sum(1 for f in (root / where).rglob("*")
                                       if f.is_file() and is_markdown(f.name))
    return sorted(found.items())


def _includes(hidden: list[str]) -> str:
    """The starter's ``include``: the default's patterns and the hidden folders named."""
    from ra.config.settings import DEFAULT_INCLUDE

    patterns = [*DEFAULT_INCLUDE, *(f"{where}/**" for where in hidden)]
    lines = ["include = ["]
    for quoted in map(json.dumps, patterns):  # wrapped at 88 characters
        if len(lines[-1]) + len(quoted) + 2 > 88:
            lines.append("          ")
        lines[-1] += f"{quoted}, "
    return ("\n".join(line.rstrip() for line in lines).removesuffix(",") + "]  "
            "# the default, and the hidden folders its pages include\n")


def _holds_markdown(folder: Path, text: bool = False) -> bool:
    """Whether ``folder`` holds a markdown file (``text``: or a text file) as a tree's
    walk finds them."""
    return next(_markdown_files(folder, text=text), None) is not None


def _markdown_files(folder: Path, skip: frozenset[str] = frozenset(),
                    text: bool = False) -> Iterator[str]:
    """Paths of the markdown files (``text``: and text files) under ``folder``, as a
    tree's walk finds them (no names starting with "."; no folders named in ``skip``), in
    sorted order."""
    for top, folders, files in os.walk(folder):
        folders[:] = sorted(f for f in folders if not f.startswith(".") and f not in skip)
        yield from (os.path.join(top, f) for f in sorted(files) if not f.startswith(".") and (
            is_markdown(f) or text and f.lower().endswith(".txt")))


def _gitignore_index(cwd: Path) -> Path | None:
    """Add ``.ra/`` to the repository's .gitignore when cwd is inside a git repo."""
    try:
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=cwd, text=True,
                             capture_output=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    ignore = Path(top) / ".gitignore"
    lines = ignore.read_text().splitlines() if ignore.exists() else []
    if any(line.strip() in (".ra/", ".ra", "/.ra/", "/.ra") for line in lines):
        return None
    prefix = "" if not lines or ignore.read_text().endswith("\n") else "\n"
    with ignore.open("a") as fh:
        fh.write(f"{prefix}.ra/\n")
    return ignore


def config_cmd() -> None:
    write_output(load().to_toml())


def update() -> None:
    from ra.pipeline.run import build

    config = load()
    report = build(config, progress=progress_bar())
    for problem in report.problems:
        output.warn(problem)
    limit = config.settings.max_chunk_size
    for chunk_id, chars in report.oversized:
        output.warn(f"{chunk_id}: {chars} characters (over max_chunk_size {limit})")
    stages = ", ".join(f"{k} {v:.1f}s" for k, v in report.stage_seconds.items())
    p = render.plural
    output.note(f"indexed {p(report.files, 'file')} into {p(report.chunks, 'chunk')}, "
                f"{p(report.terms, 'term')} in {report.seconds:.1f}s ({stages})")
    if config.semantic.enabled:
        embed(config)


def embed(config) -> None:
    """Embed the chunks that have no vector yet ([semantic]), with progress."""
    from ra.index.embedding import embed_index
    from ra.text import embedder_runtime as runtime
    from ra.text.embedders import EmbedderError

    try:
        report = embed_index(config, lambda: runtime.embedder(config.semantic),
                             progress=progress_bar("embedding", "chunks"))
    except EmbedderError as exc:
        output.warn(f"{exc}; searches use keywords alone")
        return
    output.note(report.describe())


def status(json_: bool = typer.Option(False, "--json", help="JSON output.")) -> None:
    from ra.index.status import collect_status

    info = collect_status(load())
    if json_:
        write_output(render.dumps(info) + "\n")
        return
    lines = ["config files (nearest first):"]
    lines += [f"  {f}" for f in info["config_files"]] or ["  (none)"]
    lines.append("trees:")
    for t in info["trees"]:
        missing = "" if t["exists"] else "  [missing folder]"
        lines.append(f"  {t['name']} ({t['scope']}) {t['path']}: "
                     f"{render.plural(t['documents'], 'document')}, "
                     f"{render.plural(t['chunks'], 'chunk')}{missing}")
    idx = info["index"]
    lines.append(f"index: {idx['path']}")
    lines.append(f"  state: {idx['state']}")
    if "problem" in idx:
        lines.append(f"  {idx['problem']}")
    if "updating" in idx:
        lines.append(f"  an update is under way (ra pid {idx['updating']})")
    if idx.get("built_at"):
        lines.append(f"  last update: {idx['built_at']}, size {idx['size_bytes']:,} bytes")
    if idx.get("semantic"):
        lines.append(f"  semantic: {idx['semantic']}")
    write_output("\n".join(lines) + "\n")


def check() -> None:
    from ra.config.settings import load_config
    from ra.index.status import run_checks

    findings = run_checks(load_config(Path.cwd()))  # reports the config's warnings itself
    for level, message in findings:
        if level == "error":
            output.error(RuntimeError(message))
        elif level == "warning":
            output.warn(message)
        else:
            output.note(message)
    errors = sum(1 for level, _ in findings if level == "error")
    warnings = sum(1 for level, _ in findings if level == "warning")
    output.note(f"{render.plural(errors, 'error')}, {render.plural(warnings, 'warning')}")
    raise typer.Exit(2 if errors else 1 if warnings else 0)
