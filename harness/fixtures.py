"""Find, validate and load fixture directories.

A fixture is a directory holding ``fixture.json`` (the answer key, never shown to the agent),
``task.txt`` (the prompt) and ``shards/<file>`` (one data file per shard). The manifest must
match ``schemas/fixture.schema.json``; the rules a schema cannot express are checked here:
``worker`` is ``worker-<file stem>``, files and workers are unique, shard and artifact names are
bare safe file names, every shard file is a regular file (no symlink, inside or out), and
``task.txt`` names every shard as ``shards/<file>: <question>`` with its worker on that line.

Every problem names its file and a field path (``shards[3].worker``; ``$`` for a whole file
or the whole document), and :func:`validate_fixture` reports all of them.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.errors import FixtureError
from scorers.types import Manifest

if TYPE_CHECKING:
    import jsonschema

_PACKAGE_DIR = Path(__file__).resolve().parent
#: The bundled fixtures: the copy the wheel carries inside the package once installed
#: (pyproject's force-include), else the repository's ``fixtures/`` folder in a checkout.
FIXTURES_ROOT = (
    _PACKAGE_DIR / "_fixtures"
    if (_PACKAGE_DIR / "_fixtures").is_dir()
    else _PACKAGE_DIR.parent / "fixtures"
)
SCHEMA_PATH = Path(__file__).resolve().parent / "schemas" / "fixture.schema.json"

MANIFEST_NAME = "fixture.json"
#: Optional per-agent prompts beside task.txt (``task.claude-code.txt``): the answer key's
#: siblings, never copied into the repo.
AGENT_TASK_GLOB = "task.*.txt"
TASK_NAME = "task.txt"
SHARDS_DIR = "shards"

#: A real answer key is a few KB; past this it is a mistake or an attack, and is refused from
#: its size alone, before it is read.
MAX_MANIFEST_BYTES = 4 * 1024 * 1024
#: The prompt reaches the agent as one command-line argument, and Linux limits one argument
#: to MAX_ARG_STRLEN = 32 pages = 131,072 bytes, its terminating NUL included: a larger
#: task.txt would fail every item at launch with E2BIG, so validation refuses it.
MAX_ARG_STRLEN = 32 * 4096
MAX_TASK_BYTES = MAX_ARG_STRLEN - 1
TASK_TOO_BIG = (
    "the prompt is passed to the agent as one command-line argument, which Linux limits to "
    f"{MAX_ARG_STRLEN} bytes (MAX_ARG_STRLEN); the launch would fail with E2BIG"
)

#: Field of a problem that concerns a whole file or the whole JSON document.
WHOLE = "$"

#: A bare file name: no separators, no ``..``, no leading dot (the workspace skips dotfiles),
#: nothing a shell or another OS would read differently.
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")
#: Artifact names that would overwrite the answer key, the prompt or the shards.
RESERVED_ARTIFACT_NAMES = frozenset({MANIFEST_NAME, TASK_NAME, SHARDS_DIR})


@dataclass(frozen=True)
class FixtureProblem:
    """One thing wrong with a fixture: the file it is in, the field, and what is wrong."""

    file: Path
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.field}: {self.message}"

    def to_error(self) -> FixtureError:
        return FixtureError(str(self.file), self.message, self.field)


@dataclass(frozen=True)
class Fixture:
    """A validated fixture."""

    path: Path
    manifest: Manifest
    task_text: str
    shard_paths: tuple[Path, ...]

    def agent_task(self, agent: str) -> str | None:
        """The fixture's own prompt for one agent (``task.<agent>.txt``), if it has one."""
        path = self.path / f"task.{agent}.txt"
        if not path.is_file() or path.is_symlink():
            return None
        return path.read_text(encoding="utf-8")

    def content_hash(self) -> str:
        """sha256 hex over fixture.json, task.txt and every shard, framed, in path order.

        Computed once per loaded fixture: a run's identity and each of its items record the
        same hash, and the shards are not re-read for every item.
        """
        return self._content_hash

    @functools.cached_property
    def _content_hash(self) -> str:
        files = {MANIFEST_NAME: self.path / MANIFEST_NAME, TASK_NAME: self.path / TASK_NAME}
        files.update((p.name, p) for p in self.path.glob(AGENT_TASK_GLOB) if p.is_file())
        files.update((f"{SHARDS_DIR}/{p.name}", p) for p in self.shard_paths)
        digest = hashlib.sha256()
        for rel in sorted(files):
            data = files[rel].read_bytes()
            # Name and length framing: moving bytes between files must change the hash.
            digest.update(rel.encode() + b"\0" + len(data).to_bytes(8, "big"))
            digest.update(data)
        return digest.hexdigest()


@dataclass(frozen=True)
class FixtureSummary:
    """One row of :func:`list_fixtures`. ``name`` falls back to the directory name."""

    name: str
    path: Path
    shard_count: int
    artifact: str | None
    valid: bool
    problems: tuple[FixtureProblem, ...]


def resolve_fixture(name_or_path: str, root: Path = FIXTURES_ROOT) -> Path:
    """The fixture directory named by a fixture name under ``root`` or by a path."""
    if not name_or_path.strip():
        raise FixtureError(repr(name_or_path), "a fixture name or path is required")
    if SAFE_NAME.match(name_or_path) and _exists(root / name_or_path / MANIFEST_NAME):
        return (root / name_or_path).resolve()
    candidate = Path(name_or_path).expanduser()
    if candidate.name == MANIFEST_NAME and candidate.is_file():
        candidate = candidate.parent
    if candidate.is_dir():
        if _exists(candidate / MANIFEST_NAME):
            return candidate.resolve()
        raise FixtureError(str(candidate), f"directory holds no {MANIFEST_NAME}")
    known = ", ".join(s.path.name for s in list_fixtures(root)) if root.is_dir() else "none"
    raise FixtureError(
        name_or_path, f"no fixture of that name under {root} (known: {known}) and no such directory"
    )


def validate_fixture(path: Path | str) -> list[FixtureProblem]:
    """Every problem of the fixture at ``path``; empty when it is valid."""
    return _inspect(Path(path)).problems


def load_fixture(path: Path | str) -> Fixture:
    """Load a fixture; raise :class:`FixtureError` naming the first problem."""
    path = Path(path)
    found = _inspect(path)
    if found.problems:
        raise found.problems[0].to_error()
    manifest = Manifest.from_dict(found.data)
    shard_paths = tuple(path / SHARDS_DIR / s.file for s in manifest.shards)
    return Fixture(path, manifest, found.task_text or "", shard_paths)


def list_fixtures(root: Path = FIXTURES_ROOT) -> list[FixtureSummary]:
    """A summary of every directory under ``root`` holding a fixture.json, by name."""
    if not root.is_dir():
        raise FixtureError(str(root), "fixtures folder does not exist")
    summaries = []
    for entry in sorted(root.iterdir()):
        if not entry.is_dir() or not _exists(entry / MANIFEST_NAME):
            continue
        found = _inspect(entry)
        data = found.data if isinstance(found.data, dict) else {}
        name, artifact, shards = data.get("name"), data.get("artifact"), data.get("shards")
        summaries.append(
            FixtureSummary(
                name=name if isinstance(name, str) and name else entry.name,
                path=entry,
                shard_count=len(shards) if isinstance(shards, list) else 0,
                artifact=artifact if isinstance(artifact, str) else None,
                valid=not found.problems,
                problems=tuple(found.problems),
            )
        )
    return summaries


# --- inspection ---------------------------------------------------------------------------


@dataclass
class _Inspection:
    problems: list[FixtureProblem]
    data: Any = None
    task_text: str | None = None


def _inspect(fixture: Path) -> _Inspection:
    """Every problem, in the order fixture.json, shard files, task.txt."""
    found = _Inspection(problems=[])
    if not fixture.is_dir():
        found.problems.append(FixtureProblem(fixture, WHOLE, "is not a fixture directory"))
        return found
    manifest_file, task_file = fixture / MANIFEST_NAME, fixture / TASK_NAME
    raw = _read_regular(manifest_file, MAX_MANIFEST_BYTES, found.problems)
    if raw is not None:
        found.data = _parse_manifest(manifest_file, raw, found.problems)
    entries: list[_Entry] = []
    if found.data is not None:
        # The schema and the rules both run: each rule looks only at the parts whose shape it
        # needs, so one broken shard does not hide the others' problems.
        found.problems += _schema_problems(manifest_file, found.data)
        entries = _entries(found.data)
        found.problems += _manifest_rules(manifest_file, found.data, entries)
        found.problems += _shard_file_problems(fixture, entries)
    raw_task = _read_regular(task_file, MAX_TASK_BYTES, found.problems, TASK_TOO_BIG)
    if raw_task is not None:
        found.task_text = _decode_text(task_file, raw_task, found.problems)
    if found.task_text is not None:
        if not found.task_text.strip():
            found.problems.append(FixtureProblem(task_file, WHOLE, "is empty"))
        else:
            found.problems += _task_problems(task_file, found.task_text, entries)
    return found


def _exists(path: Path) -> bool:
    return path.exists() or path.is_symlink()


def _read_regular(
    path: Path, limit: int, problems: list[FixtureProblem], why_limit: str = ""
) -> bytes | None:
    """The bytes of a regular, non-symlink file of at most ``limit`` bytes, else a problem
    (``why_limit`` says why the limit is what it is)."""
    why = f": {why_limit}" if why_limit else ""
    try:
        info = path.lstat()
    except FileNotFoundError:
        problems.append(FixtureProblem(path, WHOLE, "is missing"))
        return None
    except OSError as exc:
        problems.append(FixtureProblem(path, WHOLE, f"cannot be read: {exc.strerror}"))
        return None
    if stat.S_ISLNK(info.st_mode):
        problems.append(
            FixtureProblem(path, WHOLE, "is a symlink; fixture files must be regular files")
        )
    elif not stat.S_ISREG(info.st_mode):
        problems.append(FixtureProblem(path, WHOLE, "is not a regular file"))
    elif info.st_size > limit:
        problems.append(
            FixtureProblem(
                path, WHOLE, f"is {info.st_size} bytes, over the {limit}-byte limit{why}"
            )
        )
    else:
        try:
            with path.open("rb") as handle:
                data = handle.read(limit + 1)  # it may have grown since lstat
        except OSError as exc:
            problems.append(FixtureProblem(path, WHOLE, f"cannot be read: {exc.strerror}"))
            return None
        if len(data) <= limit:
            return data
        problems.append(FixtureProblem(path, WHOLE, f"is over the {limit}-byte limit{why}"))
    return None


def _line_col(raw: bytes, offset: int) -> str:
    line = raw.count(b"\n", 0, offset) + 1
    column = offset - (raw.rfind(b"\n", 0, offset) + 1) + 1
    return f"line {line}, column {column}"


def _decode_text(path: Path, raw: bytes, problems: list[FixtureProblem]) -> str | None:
    """UTF-8 text without NUL bytes, else a problem with the line and column."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.append(
            FixtureProblem(path, WHOLE, f"is not valid UTF-8 at {_line_col(raw, exc.start)}")
        )
        return None
    if "\0" in text:
        where = _line_col(raw, raw.index(b"\0"))
        problems.append(FixtureProblem(path, WHOLE, f"contains a NUL byte at {where}"))
        return None
    return text


class _Object(dict[str, Any]):
    """A parsed JSON object that remembers the keys it saw more than once."""

    duplicate_keys: tuple[str, ...] = ()


def _object_hook(pairs: list[tuple[str, Any]]) -> _Object:
    obj = _Object(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        duplicates = []
        for key, _ in pairs:
            if key in seen:
                duplicates.append(key)
            seen.add(key)
        obj.duplicate_keys = tuple(duplicates)
    return obj


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not valid JSON")


def _parse_manifest(path: Path, raw: bytes, problems: list[FixtureProblem]) -> Any:
    text = _decode_text(path, raw, problems)
    if text is None:
        return None
    try:
        data = json.loads(text, object_pairs_hook=_object_hook, parse_constant=_reject_constant)
        duplicates = list(_duplicate_keys(data, ()))
    except json.JSONDecodeError as exc:
        message = f"is not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        problems.append(FixtureProblem(path, WHOLE, message))
        return None
    except ValueError as exc:  # NaN / Infinity
        problems.append(FixtureProblem(path, WHOLE, f"is not valid JSON: {exc}"))
        return None
    except RecursionError:
        problems.append(FixtureProblem(path, WHOLE, "is nested too deeply"))
        return None
    for where, key in duplicates:
        message = f"key {key!r} appears more than once (the last value would win silently)"
        problems.append(FixtureProblem(path, _field((*where, key)), message))
    return data


def _duplicate_keys(node: Any, where: tuple[str | int, ...]) -> Iterator[tuple[tuple, str]]:
    if isinstance(node, _Object):
        yield from ((where, key) for key in node.duplicate_keys)
        for key, value in node.items():
            yield from _duplicate_keys(value, (*where, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _duplicate_keys(value, (*where, index))


def _field(parts: Iterable[str | int]) -> str:
    """``("shards", 3, "worker")`` -> ``shards[3].worker``; no parts -> ``$``."""
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out or WHOLE


@cache
def _validator() -> jsonschema.Draft202012Validator:
    import jsonschema  # a tenth of a second: only validation needs it, not `score` or `--help`

    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


#: How a message names each JSON Schema type.
_TYPE_NAMES = {
    "object": "an object",
    "array": "an array",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "null": "null",
}


def _json_type(value: Any) -> str:
    """The JSON type of a parsed value, as a message names it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, dict):
        return "an object"
    return "an array" if isinstance(value, list) else "a string"


def _schema_problems(path: Path, data: Any) -> list[FixtureProblem]:
    problems = []
    errors = sorted(
        _validator().iter_errors(data),
        key=lambda e: [(isinstance(p, str), p) for p in e.absolute_path],
    )
    for error in errors:
        where = tuple(error.absolute_path)
        if error.validator == "required":
            missing = [key for key in error.validator_value if key not in error.instance]
            problems += [FixtureProblem(path, _field((*where, k)), "is required") for k in missing]
            continue
        if error.validator == "type":
            allowed = error.validator_value
            allowed = allowed if isinstance(allowed, list) else [allowed]
            wanted = " or ".join(_TYPE_NAMES.get(t, t) for t in allowed)
            message = f"must be {wanted}, not {_json_type(error.instance)}"
        elif error.validator == "minLength":
            message = "must not be empty"
        elif error.validator == "minItems":
            message = f"must hold at least {error.validator_value} item(s); it is empty"
        else:
            message = error.message[:200]
        problems.append(FixtureProblem(path, _field(where), message))
    # One 'required' error is raised per missing key, each listing all the keys: dedupe.
    return list(dict.fromkeys(problems))


def _name_problem(name: str, what: str) -> str | None:
    """Why ``name`` is not a bare safe file name, or None."""
    if name.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", name):
        return f"{name!r} is an absolute path; {what} must be a bare file name"
    if ".." in re.split(r"[/\\]", name):
        return f"{name!r} escapes its folder ('..'); {what} must be a bare file name"
    if "/" in name or "\\" in name:
        return f"{name!r} contains a path separator; {what} must be a bare file name"
    if not SAFE_NAME.match(name):
        return (
            f"{name!r} is not a safe file name (letters, digits, '.', '_', '-'; "
            "starting with a letter or digit)"
        )
    return None


@dataclass(frozen=True)
class _Entry:
    """A shard entry's fields, each None unless it has the schema's shape."""

    index: int
    file: str | None
    worker: str | None
    question: str | None
    expected: Any

    @property
    def safe_file(self) -> str | None:
        """The file name, only if it is a bare safe name (never touch one that escapes)."""
        return self.file if self.file is not None and SAFE_NAME.match(self.file) else None


def _entries(data: Any) -> list[_Entry]:
    shards = data.get("shards") if isinstance(data, dict) else None
    if not isinstance(shards, list):
        return []

    def text(shard: dict[str, Any], key: str) -> str | None:
        value = shard.get(key)
        return value if isinstance(value, str) and value else None

    return [
        _Entry(i, text(s, "file"), text(s, "worker"), text(s, "question"), s.get("expected"))
        for i, s in enumerate(shards)
        if isinstance(s, dict)
    ]


def _manifest_rules(path: Path, data: Any, entries: list[_Entry]) -> list[FixtureProblem]:
    problems = []

    def problem(field: str, message: str) -> None:
        problems.append(FixtureProblem(path, field, message))

    artifact = data.get("artifact") if isinstance(data, dict) else None
    if isinstance(artifact, str) and artifact:
        why = _name_problem(artifact, "the artifact")
        if why is None and artifact in RESERVED_ARTIFACT_NAMES:
            why = f"{artifact!r} is reserved (it would overwrite the fixture's own files)"
        if why:
            problem("artifact", why)
    first_file: dict[str, int] = {}
    first_worker: dict[str, int] = {}
    for e in entries:
        at = f"shards[{e.index}]"
        if e.file is not None and (why := _name_problem(e.file, "a shard file (in shards/)")):
            problem(f"{at}.file", why)
        # Case-insensitive: on macOS and Windows the two would be one file.
        if (
            e.file is not None
            and (j := first_file.setdefault(e.file.casefold(), e.index)) != e.index
        ):
            problem(f"{at}.file", f"{e.file!r} duplicates shards[{j}].file")
        if e.safe_file and e.worker and e.worker != (wanted := f"worker-{Path(e.file).stem}"):
            problem(f"{at}.worker", f"must be {wanted!r} (worker-<file stem>), not {e.worker!r}")
        if e.worker is not None and (j := first_worker.setdefault(e.worker, e.index)) != e.index:
            problem(f"{at}.worker", f"{e.worker!r} duplicates shards[{j}].worker")
        if e.question is not None and ("\n" in e.question or "\r" in e.question):
            problem(f"{at}.question", "must be one line (task.txt quotes it on one line)")
        if isinstance(e.expected, float) and e.expected.is_integer():  # the schema allows 3.0
            problem(f"{at}.expected", f"must be an integer or a string, not {e.expected!r}")
        elif isinstance(e.expected, str) and (
            e.expected != e.expected.strip() or "\n" in e.expected
        ):
            problem(f"{at}.expected", "must be one line without surrounding whitespace")
    return problems


def _shard_file_problems(fixture: Path, entries: list[_Entry]) -> list[FixtureProblem]:
    folder = fixture / SHARDS_DIR
    if folder.is_symlink() or not folder.is_dir():
        why = "is a symlink" if folder.is_symlink() else "is missing or not a directory"
        return [FixtureProblem(folder, WHOLE, why)]
    problems = []
    for e in entries:
        if e.safe_file is None:
            continue
        path = folder / e.safe_file
        try:
            mode = path.lstat().st_mode
        except FileNotFoundError:
            why = "shard file is missing"
        except OSError as exc:
            why = f"cannot be read: {exc.strerror}"
        else:
            if stat.S_ISREG(mode):
                continue
            if stat.S_ISLNK(mode):
                why = "is a symlink; shard files must be regular files (no links, inside or out)"
            elif stat.S_ISDIR(mode):
                why = "is a directory, not a shard file"
            else:
                why = "is not a regular file"
        problems.append(FixtureProblem(path, f"shards[{e.index}].file", why))
    return problems


#: ``shards/<file>: `` where a task line names a shard: not glued to a longer path or word
#: before it, and the file a bare safe name (``:`` cannot be part of one, so the name runs to it).
_MENTION = re.compile(r"(?<![\w./-])" + SHARDS_DIR + r"/([A-Za-z0-9][A-Za-z0-9._-]*): ")
#: A maximal run of word characters and dashes: a worker name of only those characters is
#: named on a line exactly when it is one of that line's runs.
_WORD_RUN = re.compile(r"[\w-]+")


def _task_problems(path: Path, text: str, entries: list[_Entry]) -> list[FixtureProblem]:
    """task.txt must quote each ``shards/<file>: <question>`` with its worker on that line.

    One pass over the text indexes every shard mention by file; each entry then looks up its
    own mentions, so the cost is linear in the text plus the shards (a search per shard over
    every line was quadratic: 1,800 shards took seconds).
    """
    lines = text.splitlines()
    mentions: dict[str, list[tuple[int, int]]] = {}  # file -> (line number, question start)
    for number, line in enumerate(lines):
        for match in _MENTION.finditer(line):
            mentions.setdefault(match.group(1), []).append((number, match.end()))
    runs: dict[int, frozenset[str]] = {}  # line number -> its word runs, built on demand

    def names_worker(number: int, worker: str) -> bool:
        if _WORD_RUN.fullmatch(worker):
            if number not in runs:
                runs[number] = frozenset(_WORD_RUN.findall(lines[number]))
            return worker in runs[number]
        # A worker with other characters (a dotted file stem): the exact boundary rule.
        return re.search(rf"(?<![\w-]){re.escape(worker)}(?![\w-])", lines[number]) is not None

    problems = []
    for e in entries:
        if e.safe_file is None or e.question is None or "\n" in e.question:
            continue  # the manifest's own problem says it all
        mention = f"{SHARDS_DIR}/{e.file}: {e.question}"
        hits = [
            number
            for number, start in mentions.get(e.safe_file, ())
            if lines[number].startswith(e.question, start)
        ]
        if not hits:
            message = f"does not name this shard: no line holds {mention!r}"
            problems.append(FixtureProblem(path, f"shards[{e.index}]", message))
        elif e.worker is not None and not any(names_worker(n, e.worker) for n in hits):
            message = f"does not name worker {e.worker!r} on the line of {mention!r}"
            problems.append(FixtureProblem(path, f"shards[{e.index}].worker", message))
    return problems
