"""How a scripted Codex thread changes files: with Codex's own ``apply_patch``, under a lock.

``apply_patch`` takes a patch in Codex's own format (``*** Begin Patch``, a section per file,
``*** End Patch``) whose hunks name whole lines: the old lines must be in the file as it is
when the patch applies, or nothing of the patch applies ("apply_patch verification
failed"). So a thread first reads each file it changes (``cat`` through ``exec_command``),
then sends one patch built from what it read, and reads again and retries when the patch
did not apply. Codex offers the tool to a model its catalog gives one
(:mod:`harness.agents.codex.catalog`); without it, the same patch goes through
``exec_command`` as ``apply_patch <<'PATCH'``, which Codex applies the same way.

Codex applies a patch as an unlocked read-modify-write of each file, written in place, so
two threads patching one shared file at once lose lines: one's write replaces the other's
(both report success), or one reads the file half-written and fails (measured in
docs/reference/agents/codex.md). A selftest script must reach one verdict whatever the
timing, so every thread takes a lock around its change, through its own shell tool:
:data:`TAKE_LOCK` makes a folder in the item's private ``TMPDIR`` (``mkdir`` is atomic:
one thread makes it, the others wait for it to go), then the thread reads, patches with
``apply_patch`` (the change is still Codex's ``FileChange``, read as the thread's write)
and removes the folder (:data:`DROP_LOCK`). Codex will not do this for it: it applies
``apply_patch`` only when a command is that call alone (``flock . apply_patch <<'PATCH'``
runs as a plain command, and no ``apply_patch`` program is on the shell's ``PATH``).
"""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from scripted_model.oracle import Edit

PATCH_TOOL: Final = "apply_patch"
#: What starts a read of a file the thread is about to change.
READ_PREFIX: Final = "cat -- "
#: What precedes a finished command's exit code in ``exec_command``'s output.
EXITED: Final = "Process exited with code "
#: How the output of a successful patch begins (the freeform tool's; the shell's wraps it).
PATCH_OK: Final = ("Exit code: 0", "Success. Updated the following files")
#: Times a thread reads and patches before it gives up (the lines its patch names are not
#: there).
EDIT_TRIES: Final = 3
#: The edit lock: a folder in the item's private TMPDIR (never in the repo, so no shard's
#: files or the repo's list of changes show it; the item's cleanup removes a leftover).
LOCK_DIR: Final = '"${TMPDIR:-/tmp}/swh-edit.lock"'
#: Seconds one try to take the lock waits inside its command: well under the time
#: ``exec_command`` waits for a command to exit before it returns it as still running (10 s
#: by default in Codex's unified exec; every try that gave up came back exited in the
#: selftest runs). A command that could still take the lock after its call returned would
#: hold it unseen.
LOCK_WAIT_S: Final = 4
#: Tries to take the lock before a thread changes its files without it: a holder stopped
#: mid-change (Codex aborted it) never gives it back. Each try waits up to
#: :data:`LOCK_WAIT_S`, and a holder keeps it for three model turns (read, patch, release):
#: a minute is far more than the other children of an item take on a loaded machine.
LOCK_TRIES: Final = 15
TAKE_LOCK: Final = (
    f"until mkdir {LOCK_DIR} 2>/dev/null; do "
    f"[ $SECONDS -lt {LOCK_WAIT_S} ] || exit 1; sleep 0.05; done"
)
DROP_LOCK: Final = f"rmdir {LOCK_DIR}"
#: A comment line by file extension: what ``edit-wrong-lane`` appends to a file it does
#: not own (a harmless change, so that file's own shard still passes its checks).
COMMENT: Final[Mapping[str, str]] = {
    **dict.fromkeys((".py", ".toml", ".yaml", ".yml", ".sh", ".cfg", ".ini", ".txt", ""), "# {}"),
    **dict.fromkeys((".md", ".html", ".xml"), "<!-- {} -->"),
    **dict.fromkeys((".js", ".ts", ".go", ".rs", ".c", ".h", ".java"), "// {}"),
}


def read_command(path: str) -> str:
    return READ_PREFIX + shlex.quote(path)


def read_path(cmd: str) -> str | None:
    """The file a read command reads (None: not a read of a file to change)."""
    if not cmd.startswith(READ_PREFIX):
        return None
    words = shlex.split(cmd[len(READ_PREFIX) :])
    return words[0] if len(words) == 1 else None


def command_stdout(output: str) -> str:
    """What a command printed, from ``exec_command``'s output text (after ``Output:``)."""
    _, sep, body = output.partition("Output:\n")
    return body if sep else ""


def exit_code(output: str | None) -> int | None:
    """The exit code ``exec_command``'s output reports (None: none, the command is still
    running or never ran)."""
    for line in (output or "").split("\n"):
        if line.startswith(EXITED):
            code = line[len(EXITED) :].strip()
            return int(code) if code.lstrip("-").isdigit() else None
        if line.startswith("Output:"):
            break
    return None


def patch_applied(output: str) -> bool:
    """Whether a patch's output says it applied (the shell's wraps the tool's)."""
    return any(output.startswith(ok) or f"Output:\n{ok}" in output for ok in PATCH_OK)


def comment_line(path: str, text: str) -> str | None:
    """``text`` as a comment line of ``path``'s language (None: a file without comments)."""
    template = COMMENT.get(posixpath.splitext(path)[1].lower())
    return template.format(text) if template else None


def _line_span(text: str, start: int, stop: int) -> tuple[int, int]:
    """The whole lines of ``text`` that hold ``text[start:stop]``: their start and end (the
    end past the last line's newline, if it has one)."""
    first = text.rfind("\n", 0, start) + 1
    if stop > first and text[stop - 1] == "\n":
        return first, stop
    newline = text.find("\n", stop)
    return first, len(text) if newline < 0 else newline + 1


def _hunk(block: str, changed: str) -> str:
    """A hunk turning the whole lines ``block`` into ``changed``: no context lines, the old
    lines themselves are unique (each holds an old text found once in the file)."""
    old = block.removesuffix("\n").split("\n")
    new = changed.removesuffix("\n").split("\n") if changed else []
    return "\n".join(["@@", *("-" + line for line in old), *("+" + line for line in new)])


def _file_hunks(text: str, edits: Sequence[Edit]) -> list[str]:
    """The hunks making ``edits`` on ``text``, in file order (edits on shared lines merged
    into one hunk); an edit whose old text is not there, or that is there already (an
    insertion: its new text holds the old), is left out."""
    spans: list[tuple[int, int, list[Edit]]] = []
    for edit in edits:
        at = text.find(edit.old)
        if at < 0 or not edit.old or (edit.old in edit.new and edit.new in text):
            continue
        first, end = _line_span(text, at, at + len(edit.old))
        spans.append((first, end, [edit]))
    spans.sort(key=lambda span: span[0])
    merged: list[tuple[int, int, list[Edit]]] = []
    for first, end, mine in spans:
        if merged and first < merged[-1][1]:
            prev = merged[-1]
            merged[-1] = (prev[0], max(prev[1], end), prev[2] + mine)
        else:
            merged.append((first, end, mine))
    hunks = []
    for first, end, mine in merged:
        block = changed = text[first:end]
        for edit in mine:
            changed = changed.replace(edit.old, edit.new, 1)
        hunks.append(_hunk(block, changed))
    return hunks


def build_patch(
    edits: Sequence[Edit], texts: Mapping[str, str], appends: Iterable[tuple[str, str]] = ()
) -> str | None:
    """One patch making ``edits`` on the files as read (``texts``: path -> text), and
    appending each ``(path, line)`` of ``appends`` at its file's end; None when nothing is
    left to change. An edit whose old text is not in the file as read is left out: made
    already (by this thread's earlier patch), or the file was read before another thread's
    change (the next read has it)."""
    sections = []
    by_path: dict[str, list[Edit]] = {}
    for edit in edits:
        by_path.setdefault(edit.path, []).append(edit)
    for path, mine in by_path.items():
        hunks = _file_hunks(texts.get(path, ""), mine)
        if hunks:
            sections.append(f"*** Update File: {path}\n" + "\n".join(hunks))
    for path, line in appends:  # a hunk of added lines only: Codex appends it at the end
        sections.append(f"*** Update File: {path}\n@@\n+{line}")
    if not sections:
        return None
    return "*** Begin Patch\n" + "\n".join(sections) + "\n*** End Patch\n"


def shell_patch(patch: str) -> str:
    """The patch as a shell command (Codex applies ``apply_patch <<'PATCH'`` itself)."""
    return f"{PATCH_TOOL} <<'PATCH'\n{patch}PATCH\n"


__all__ = [
    "DROP_LOCK",
    "EDIT_TRIES",
    "LOCK_TRIES",
    "PATCH_TOOL",
    "TAKE_LOCK",
    "build_patch",
    "command_stdout",
    "comment_line",
    "exit_code",
    "patch_applied",
    "read_command",
    "read_path",
    "shell_patch",
]
