"""Landed: on an edit fixture, each shard's change is in the final tree and its hidden
checks pass there.

The collector ran every shard's hidden checks on a fresh copy of the fixture that holds,
of the agent's final repo, only the files the fixture declares editable
(``edits.json``, :class:`~scorers.records.TreeEvidence`). A shard has landed when its
checks passed and none of its own files was deleted. A shard whose checks failed while its
own child's records show it writing a shared file that another thread also wrote is named
"clobbered by" that writer (the last one after it, where the records give times): its
change was made and then lost.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from scorers.records import FileWrite, TreeEvidence
from scorers.types import Manifest, Shard

#: Characters of the checks' last output line quoted in a reason.
QUOTED: Final = 120


@dataclass(frozen=True, slots=True)
class Unlanded:
    """A shard whose change did not land: why (one line), and the same in words stable
    from trial to trial (triage's grouping key)."""

    file: str
    reason: str
    signature: str

    def __str__(self) -> str:
        return f"{self.file}: {self.reason}"

    def to_dict(self) -> dict[str, str]:
        return {"file": self.file, "reason": self.reason}


def last_line(text: str) -> str:
    """The last non-empty line of ``text``, cut at :data:`QUOTED` characters."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    line = lines[-1]
    return line if len(line) <= QUOTED else line[: QUOTED - 1] + "…"


def thread_name(child_id: str | None, names: Mapping[str, str]) -> str:
    """A writer as people read it: ``the parent``, a child's worker name, or its id."""
    if child_id is None:
        return "the parent"
    return names.get(child_id, f"child {child_id}")


def clobberer(
    shard: Shard, shared: Sequence[str], writes: Sequence[FileWrite], names: Mapping[str, str]
) -> str | None:
    """Who overwrote the shard's part of a shared file, when its own child wrote that file
    and another thread wrote it too: of the writes after its own child's last one, the
    latest (the one the file holds) when the records say when, else the first other
    writer; None otherwise."""
    own = {cid for cid, name in names.items() if name == shard.worker}
    for path in shared:
        on_file = [w for w in writes if w.path == path]
        mine = [w for w in on_file if w.child_id in own]
        others = [w for w in on_file if w.child_id not in own]
        if not mine or not others:
            continue
        last_mine = max((w.at for w in mine if w.at), default=None)
        later = [w for w in others if last_mine is not None and w.at and w.at > last_mine]
        # The last of them: the one whose write the file holds (record order breaks a tie).
        culprit = max(reversed(later), key=lambda w: w.at or "") if later else others[0]
        return thread_name(culprit.child_id, names)
    return None


def check_landed(
    manifest: Manifest,
    tree: TreeEvidence | None,
    writes: Sequence[FileWrite],
    names: Mapping[str, str],
) -> tuple[Unlanded, ...]:
    """Every edit shard whose change is not in the final tree, in manifest order.

    Stops the claimed-but-not-made cheat: a parent or child that reports the value the
    changed code would give without making the change, and a change planted where it only
    fools the checks (a ``conftest.py``, an edited test, a ``sitecustomize.py``), which the
    checks never see. Also catches a change lost to another writer of a shared file.
    """
    if manifest.kind != "edit":
        return ()
    if tree is None:
        return tuple(
            Unlanded(s.file, "no record of the final tree", "final tree missing")
            for s in manifest.shards
        )
    if tree.checks_error is not None:
        error = last_line(tree.checks_error)
        return tuple(
            Unlanded(s.file, f"checks could not run: {error}", "checks could not run")
            for s in manifest.shards
        )
    found: list[Unlanded] = []
    for shard in manifest.shards:
        gone = [
            (path, change.state)
            for path in shard.owns
            if (change := tree.change(path)) is not None
            and change.state in ("deleted", "not a regular file")
        ]
        if gone:
            path, state = gone[0]
            found.append(Unlanded(shard.file, f"{path} {state}", f"{path} {state}"))
            continue
        checks = tree.checks_of(shard.file)
        if checks is None:
            found.append(Unlanded(shard.file, "no checks result", "no checks result"))
        elif checks.outcome == "timed out":
            found.append(Unlanded(shard.file, "checks timed out", "checks timed out"))
        elif checks.outcome == "error":
            found.append(
                Unlanded(shard.file, f"checks error: {last_line(checks.tail)}", "checks error")
            )
        elif checks.outcome != "passed":
            culprit = clobberer(shard, manifest.shared, writes, names)
            if culprit is not None:
                found.append(
                    Unlanded(shard.file, f"clobbered by {culprit}", f"clobbered by {culprit}")
                )
            else:
                quoted = last_line(checks.tail)
                found.append(
                    Unlanded(
                        shard.file,
                        f"checks failed: {quoted}" if quoted else "checks failed",
                        "checks failed",
                    )
                )
    return tuple(found)
