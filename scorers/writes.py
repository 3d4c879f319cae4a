"""Which files a shell command or a Python cell writes, read from its text alone.

Agents record an exact edit (an Edit tool, prime-agent's edit skill) with the file and the
change; a shell command (``sed -i``, a redirect, ``tee``) or a Python cell
(``Path(...).write_text``) leaves only its text. Edit provenance still has to say who wrote
a file, so these helpers read that text. They name a file only where the text shows a write
to it, never where it merely mentions it: a child that reads another shard's file with
``cat`` or ``open(path)`` has not written it. What they cannot see (a path built at run time,
a write inside a script the command runs) they do not guess: the rules then find no record
of who changed the file, which fails the shard rather than crediting anyone.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from typing import Final

from scorers.records import NormPath, WriteHow, normalize_path

#: Shell words that end one simple command and start the next.
_SEPARATORS: Final = frozenset({";", "&&", "||", "|", "&", "\n", "(", ")", "|&", ";;"})
#: Redirect operators whose next word is a file the command writes.
_REDIRECTS: Final = frozenset({">", ">>", ">|", "&>", "&>>", "1>", "2>", "1>>", "2>>"})
#: Commands that write every file operand they are given (``touch a b``).
_WRITE_ALL: Final = frozenset({"touch", "truncate", "shred", "tee"})
#: Commands that remove every file operand.
_DELETE_ALL: Final = frozenset({"rm", "unlink"})
#: Commands whose last operand is written from the others (``cp a b``, ``install a b``).
_COPY: Final = frozenset({"cp", "install", "ln"})
#: The in-place editors: every operand after the program text is written.
_IN_PLACE: Final = frozenset({"sed", "perl", "gsed"})
#: Wrappers whose own options come before the real command (``sudo sed -i ...``).
_WRAPPERS: Final = frozenset({"sudo", "env", "command", "nice", "nohup", "time", "xargs"})

#: Python calls whose first string argument, or whose receiver's path, is written.
_CODE_WRITE: Final = re.compile(
    r"\.(?:write_text|write_bytes|touch)\s*\(|"
    r"\b(?:shutil\.(?:copy|copy2|copyfile|move)|os\.(?:replace|rename))\s*\("
)
_CODE_DELETE: Final = re.compile(r"\.unlink\s*\(|\bos\.(?:remove|unlink)\s*\(")
#: ``open(<literal>, <mode>)`` with a mode that writes.
_OPEN: Final = re.compile(
    r"""\bopen\s*\(\s*(?:[rRbBuU]?['"](?P<path>[^'"\n]+)['"]|(?P<name>\w+))\s*,\s*"""
    r"""(?:mode\s*=\s*)?['"](?P<mode>[^'"]*)['"]"""
)
#: A string literal (single or double quoted, no newline inside).
_LITERAL: Final = re.compile(r"""['"](?P<text>[^'"\n]+)['"]""")
#: ``name = Path("...")`` or ``name = "..."``: names that stand for a path in later lines.
_ASSIGN: Final = re.compile(
    r"""^\s*(?P<name>\w+)\s*=\s*(?:\w+\.)?(?:Path\s*\(\s*)?['"](?P<path>[^'"\n]+)['"]"""
)
#: A receiver named before a write call: ``p.write_text(`` or ``Path("x").write_text(``.
_RECEIVER: Final = re.compile(
    r"""(?:Path\s*\(\s*['"](?P<path>[^'"\n]+)['"]\s*\)|(?P<name>\w+))\s*"""
    r"""\.(?P<method>write_text|write_bytes|touch|unlink)\s*\("""
)

Found = tuple[tuple[str, WriteHow], ...]


def _commands(command: str) -> Iterator[list[str]]:
    """The simple commands of a shell text, as word lists (operators kept as words)."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace = " \t\r"  # newlines end a command: keep them as words
    lexer.wordchars += "~-./*?[]{}=+:,@%^"
    words: list[str] = []
    try:
        for word in lexer:
            if word in _SEPARATORS or word == "\n":
                if words:
                    yield words
                words = []
            else:
                words.append(word)
    except ValueError:  # an unclosed quote: what was read so far still counts
        pass
    if words:
        yield words


def _split_heredocs(command: str) -> tuple[str, list[str]]:
    """``command`` without the bodies of its here-documents (their text is data, not
    commands; a ``cat > f <<EOF`` still shows its redirect), and the bodies fed to a Python
    interpreter (``python - <<EOF``), which are program text."""
    kept: list[str] = []
    programs: list[str] = []
    body: list[str] = []
    ending: str | None = None
    python = False
    for line in command.split("\n"):
        if ending is not None:
            if line.strip() == ending:
                if python:
                    programs.append("\n".join(body))
                ending, body = None, []
            else:
                body.append(line)
            continue
        kept.append(line)
        found = re.search(r"<<-?\s*['\"]?(\w+)['\"]?", line)
        if found:
            ending = found.group(1)
            python = re.search(r"\bpython[0-9.]*\b", line) is not None
    return "\n".join(kept), programs


#: An in-place editor's options whose next word is their argument (``sed -e SCRIPT``).
_OPTION_ARGUMENT: Final = frozenset({"-e", "-f", "--expression", "--file", "-t", "-m"})


def _operands(words: list[str], editor: bool = False) -> list[str]:
    """The non-option words after the program; for an in-place editor, an option's own
    argument (``-e SCRIPT``) skipped."""
    found: list[str] = []
    skip = False
    for word in words[1:]:
        if skip:
            skip = False
        elif editor and word in _OPTION_ARGUMENT:
            skip = True
        elif not word.startswith("-"):
            found.append(word)
    return found


def _under(folder: str, path: str) -> str:
    """``path`` as seen from where a preceding ``cd folder`` left the command."""
    if not folder or path.startswith(("/", "~")):
        return path
    return f"{folder.rstrip('/')}/{path}"


def shell_writes(command: str) -> Found:
    """The files a shell command writes (``shell``) or removes or moves away (``delete``),
    spelled as the command spells them, in order, each once.

    Stops the quiet writer: a child that changes another shard's file with ``sed -i`` or a
    redirect instead of an edit tool is still seen changing it.
    """
    found: dict[str, WriteHow] = {}
    text, programs = _split_heredocs(command)
    folder = ""  # where a ``cd`` in the command moved it (relative to where it began)

    def note(path: str, how: WriteHow) -> None:
        path = _under(folder, path)
        if how == "delete":
            found[path] = how
        else:
            found.setdefault(path, how)

    for words in _commands(text):
        rest: list[str] = []
        index = 0
        while index < len(words):  # redirects first: they apply to any command
            word = words[index]
            if word in (">", ">>", ">|") or (word == "&" and words[index + 1 : index + 2] == [">"]):
                target = words[index + 1] if index + 1 < len(words) else ""
                if target == ">":  # ``&>`` / ``>>`` split by the lexer
                    target = words[index + 2] if index + 2 < len(words) else ""
                    index += 1
                if target and not target.startswith("&") and target != "/dev/null":
                    note(target, "shell")
                index += 2
                continue
            if word == "<":
                index += 2
                continue
            rest.append(word)
            index += 1
        while rest and (rest[0] in _WRAPPERS or ("=" in rest[0] and not rest[0].startswith("-"))):
            rest = rest[1:]
        if not rest:
            continue
        program = rest[0].rsplit("/", 1)[-1]
        operands = _operands(rest, editor=program in _IN_PLACE)
        if program == "cd":
            target = operands[0] if operands else ""
            folder = "" if not target or target.startswith(("/", "~")) else _under(folder, target)
        elif re.fullmatch(r"python[0-9.]*", program) and "-c" in rest:
            at = rest.index("-c")
            if at + 1 < len(rest):
                programs.append(rest[at + 1])
        elif program in _IN_PLACE:
            in_place = any(w.startswith("-i") or w.startswith("-pi") for w in rest[1:]) or any(
                w.startswith("-") and "i" in w[1:] and not w.startswith("--") for w in rest[1:]
            )
            if not in_place:
                continue
            has_script_option = any(w in _OPTION_ARGUMENT for w in rest[1:])
            files = operands if has_script_option else operands[1:]
            for path in files:
                note(path, "shell")
        elif program == "tee" or program in _WRITE_ALL:
            for path in operands:
                note(path, "shell")
        elif program in _DELETE_ALL:
            for path in operands:
                note(path, "delete")
        elif program in _COPY and len(operands) >= 2:
            note(operands[-1], "shell")
        elif program == "mv" and len(operands) >= 2:
            for path in operands[:-1]:
                note(path, "delete")
            note(operands[-1], "shell")
    for program_text in programs:
        for path, how in code_writes(program_text):
            note(path, "shell" if how == "code" else how)
    return tuple(found.items())


def code_writes(code: str) -> Found:
    """The files a Python cell writes (``code``) or removes (``delete``), where the cell
    names them as string literals (directly or through a name assigned one), in order, each
    once.

    Stops the quiet writer: a child that rewrites another shard's file with
    ``Path(...).write_text`` is seen changing it; one that only reads it is not.
    """
    names: dict[str, str] = {}
    found: dict[str, WriteHow] = {}
    for line in code.split("\n"):
        assigned = _ASSIGN.match(line)
        if assigned:
            names[assigned.group("name")] = assigned.group("path")
        for opened in _OPEN.finditer(line):
            if not set(opened.group("mode")) & set("wax+"):
                continue
            path = opened.group("path") or names.get(opened.group("name") or "")
            if path:
                found.setdefault(path, "code")
        deletes = bool(_CODE_DELETE.search(line))
        if not (deletes or _CODE_WRITE.search(line)):
            continue
        for receiver in _RECEIVER.finditer(line):
            path = receiver.group("path") or names.get(receiver.group("name") or "")
            if path:
                if receiver.group("method") == "unlink":
                    found[path] = "delete"
                else:
                    found.setdefault(path, "code")
        call = _CODE_WRITE.search(line) or _CODE_DELETE.search(line)
        if call is not None and call.group(0).startswith(("shutil", "os")):
            args = line[call.end() :]
            literals = [m.group("text") for m in _LITERAL.finditer(args)]
            words = [w.strip() for w in args.split(",")]
            paths = literals or [names[w] for w in words if w in names]
            if "remove" in call.group(0) or "unlink" in call.group(0):
                for path in paths[:1]:
                    found[path] = "delete"
            elif "move" in call.group(0) or "rename" in call.group(0) or "replace" in call.group(0):
                if len(paths) >= 2:
                    found[paths[0]] = "delete"
                    found.setdefault(paths[1], "code")
            elif len(paths) >= 2:
                found.setdefault(paths[1], "code")
    return tuple(found.items())


def repo_relative(path: str, cwd: str | None) -> NormPath:
    """``path`` as a :class:`~scorers.records.FileWrite` names it: relative to the thread's
    working directory ``cwd`` when it lies below it (``./`` dropped), normalised; an
    absolute path elsewhere keeps its parts (without the leading ``/``)."""
    if not path:
        return ""
    parts = [p for p in normalize_path(path).split("/") if p not in ("", ".")]
    if path.startswith(("/", "\\")) and cwd:
        base = [p for p in normalize_path(cwd).split("/") if p not in ("", ".")]
        if parts[: len(base)] == base and len(parts) > len(base):
            parts = parts[len(base) :]
    return "/".join(parts)
