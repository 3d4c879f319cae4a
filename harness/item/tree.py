"""The final tree of an edit fixture, collected into the bundle's ``edits.json``.

After the agent stopped and before its workdir is removed, the collector records each
declared file's state and a bounded unified diff against the fixture as shipped, the repo
paths the run changed that no shard declares (``undeclared``), and every shard's hidden
checks (:func:`harness.item.checks.run_checks` on the final repo). The agent's ``.git`` is
never asked: it is the agent's to rewrite (a commit would hide a planted file from
``git status``), so the tree is walked and compared with a fresh copy of the shipped files.
"""

from __future__ import annotations

import difflib
import filecmp
import os
from pathlib import Path

from harness.files import bounded, open_regular, write_json_atomic
from harness.fixtures import Fixture
from harness.item.checks import CHECKS_LIMIT_S, declared_state, run_checks
from harness.item.workspace import copy_shipped_tree
from scorers.records import FileChange, NormPath, ShardChecks, TreeEvidence
from scorers.tree import EDITS_NAME, tree_to_dict

#: A diff is for a person to read in a report: past this it is cut (``truncated``).
MAX_DIFF_CHARS = 20_000
#: Source a diff is computed from, per side: difflib's matching grows faster than linear,
#: and a declared file larger than this is not a hand-made change worth a line diff.
MAX_DIFF_INPUT_BYTES = 256 * 1024
#: Entries of the final repo looked at for ``undeclared``: an agent that installed a
#: virtualenv or node_modules in the repo must not make collection walk it all.
MAX_WALK_ENTRIES = 20_000
#: Undeclared paths listed (sorted): enough to see what a cheat planted.
MAX_UNDECLARED = 200
#: Python's own bytecode caches: written by any import in the repo (the agent running its
#: tests), never read by the checks (they run ``-B`` on a copy without them). Not changes.
SKIPPED_DIRS = frozenset({"__pycache__"})


def _read(root: Path, rel: str) -> bytes | None:
    """``rel``'s bytes (at most one past the diff bound), None when not a regular file."""
    if declared_state(root, rel) != "regular":
        return None
    with open_regular(root / rel) as raw, bounded(raw, MAX_DIFF_INPUT_BYTES + 1) as f:
        return f.read()


def _diff(rel: str, old: bytes | None, new: bytes | None) -> tuple[str, bool]:
    """A unified diff of ``old`` -> ``new`` (None: absent), and whether it was cut."""
    if len(old or b"") > MAX_DIFF_INPUT_BYTES or len(new or b"") > MAX_DIFF_INPUT_BYTES:
        return "", True
    a = (old or b"").decode("utf-8", "replace").splitlines(keepends=True)
    b = (new or b"").decode("utf-8", "replace").splitlines(keepends=True)
    lines = difflib.unified_diff(
        a,
        b,
        "/dev/null" if old is None else f"a/{rel}",
        "/dev/null" if new is None else f"b/{rel}",
    )
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    if len(text) > MAX_DIFF_CHARS:
        return text[:MAX_DIFF_CHARS], True
    return text, False


def file_change(shipped: Path, repo: Path, rel: str) -> FileChange:
    """One declared file as the run left it, against the shipped copy."""
    state = declared_state(repo, rel)
    if state == "not a regular file":
        return FileChange(rel, "not a regular file")
    old, new = _read(shipped, rel), _read(repo, rel)
    if old is None or new is None:
        same = old is new
    elif max(len(old), len(new)) > MAX_DIFF_INPUT_BYTES:  # only the bounded start was read
        same = filecmp.cmp(shipped / rel, repo / rel, shallow=False)
    else:
        same = old == new
    if same:
        return FileChange(rel, "unchanged")
    diff, truncated = _diff(rel, old, new)
    if new is None:
        return FileChange(rel, "deleted", diff, truncated)
    return FileChange(rel, "changed", diff, truncated)


def _walk(root: Path, skip_git: bool) -> dict[NormPath, Path]:
    """Every non-directory entry below ``root`` (symlinks not followed), bounded."""
    found: dict[NormPath, Path] = {}
    seen = 0
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        rel = here.relative_to(root)
        if skip_git and rel == Path("."):
            dirnames[:] = [d for d in dirnames if d != ".git"]
        linked = [d for d in dirnames if (here / d).is_symlink()]
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS and d not in linked)
        for name in sorted([*filenames, *linked]):
            seen += 1
            if seen > MAX_WALK_ENTRIES:
                return found
            found[(rel / name).as_posix()] = here / name
    return found


def undeclared_paths(shipped: Path, repo: Path, declared: set[str]) -> tuple[NormPath, ...]:
    """Repo paths the run added, changed or removed that ``declared`` does not name."""
    before, after = _walk(shipped, False), _walk(repo, True)
    changed = []
    for rel, path in after.items():
        if rel in declared:
            continue
        old = before.get(rel)
        same = (
            old is not None
            and not path.is_symlink()
            and path.is_file()
            and filecmp.cmp(old, path, shallow=False)
        )
        if not same:
            changed.append(rel)
    changed.extend(rel for rel in before if rel not in after and rel not in declared)
    return tuple(sorted(changed)[:MAX_UNDECLARED])


def collect_tree(
    fixture: Fixture,
    repo: Path,
    item_dir: Path,
    work_dir: Path,
    *,
    limit_s: float = CHECKS_LIMIT_S,
) -> TreeEvidence:
    """Write ``item_dir/edits.json`` for the final ``repo`` of an edit fixture's item, using
    ``work_dir`` (created; the caller removes it) for the copies. What goes wrong reading the
    tree or running the checks is recorded as the checks' error, never raised; only writing
    edits.json itself can raise (OSError)."""
    manifest = fixture.manifest
    errors: list[str] = []
    files: tuple[FileChange, ...] = ()
    undeclared: tuple[NormPath, ...] = ()
    shards: tuple[ShardChecks, ...] = ()
    seconds = 0.0
    work_dir.mkdir(parents=True, exist_ok=True)
    try:
        shipped = work_dir / "shipped"
        copy_shipped_tree(fixture.path, shipped)
        files = tuple(file_change(shipped, repo, rel) for rel in manifest.editable)
        undeclared = undeclared_paths(shipped, repo, {*manifest.editable, manifest.artifact})
    except Exception as exc:  # a tree the collector cannot read must not lose the item
        errors.append(f"the final tree could not be read: {exc}")
    try:
        run = run_checks(fixture.path, manifest, repo, work_dir / "checks", limit_s)
        shards, seconds = run.shards, run.seconds
        if run.error:
            errors.append(run.error)
    except Exception as exc:  # likewise: the item is recorded, its checks errored
        errors.append(f"the hidden checks could not run: {exc}")
    tree = TreeEvidence(files, shards, undeclared, "; ".join(errors) or None)
    write_json_atomic(item_dir / EDITS_NAME, tree_to_dict(tree, seconds))
    return tree
