"""harness.fixtures: resolving, loading, listing, and one test per hostile manifest."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.errors import FixtureError
from harness.fixtures import fixture as fx
from harness.fixtures.fixture import (
    FIXTURES_ROOT,
    MAX_MANIFEST_BYTES,
    list_fixtures,
    load_fixture,
    resolve_fixture,
    validate_fixture,
)

FIXTURE_NAMES = ("csv-metrics", "json-events")


@pytest.fixture
def fixture_copy(tmp_path: Path) -> Path:
    """A private copy of json-events to break."""
    return Path(shutil.copytree(FIXTURES_ROOT / "json-events", tmp_path / "copy"))


def edit_manifest(path: Path, change: Callable[[dict[str, Any]], object]) -> None:
    """Apply ``change`` to the parsed fixture.json in place and write it back."""
    data = json.loads((path / "fixture.json").read_text())
    change(data)
    (path / "fixture.json").write_text(json.dumps(data, indent=2))


def replace_text(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def rename_shard(path: Path, index: int, new_file: str) -> None:
    """Rename one shard's file everywhere: on disk, in the manifest (and its worker), in task.txt."""
    data = json.loads((path / "fixture.json").read_text())
    shard = data["shards"][index]
    old_file, old_worker = shard["file"], shard["worker"]
    shard["file"], shard["worker"] = new_file, "worker-" + Path(new_file).stem
    (path / "fixture.json").write_text(json.dumps(data, indent=2))
    (path / "shards" / old_file).rename(path / "shards" / new_file)
    text = (path / "task.txt").read_text()
    (path / "task.txt").write_text(
        text.replace(f"shards/{old_file}:", f"shards/{new_file}:").replace(
            f"(worker: {old_worker})", f"(worker: {shard['worker']})"
        )
    )


# --- the committed fixtures -----------------------------------------------------------


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_committed_fixture_is_valid(name: str) -> None:
    assert validate_fixture(FIXTURES_ROOT / name) == []
    loaded = load_fixture(FIXTURES_ROOT / name)
    assert loaded.manifest.name == name
    assert loaded.manifest.artifact == "combined-index.md"
    assert len(loaded.manifest.shards) == len(loaded.shard_paths) == 8
    assert all(p.parent == FIXTURES_ROOT / name / "shards" for p in loaded.shard_paths)
    assert loaded.task_text == (FIXTURES_ROOT / name / "task.txt").read_text()


def test_list_fixtures_reports_both_valid() -> None:
    summaries = {s.name: s for s in list_fixtures()}
    assert set(FIXTURE_NAMES) <= set(summaries)
    for name in FIXTURE_NAMES:
        assert summaries[name].valid
        assert summaries[name].shard_count == 8
        assert summaries[name].artifact == "combined-index.md"
        assert summaries[name].path == FIXTURES_ROOT / name


def test_list_fixtures_ignores_dirs_without_manifest_and_flags_invalid(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES_ROOT / "csv-metrics", tmp_path / "good")
    shutil.copytree(FIXTURES_ROOT / "csv-metrics", tmp_path / "bad")
    (tmp_path / "bad" / "task.txt").unlink()
    (tmp_path / "not-a-fixture").mkdir()
    (tmp_path / "stray-file.txt").write_text("x")
    summaries = list_fixtures(tmp_path)
    assert [(s.path.name, s.valid) for s in summaries] == [("bad", False), ("good", True)]
    assert summaries[0].problems[0].file == tmp_path / "bad" / "task.txt"


def test_list_fixtures_missing_root(tmp_path: Path) -> None:
    with pytest.raises(FixtureError, match="does not exist"):
        list_fixtures(tmp_path / "nope")


def test_content_hash_is_stable_and_covers_every_file(fixture_copy: Path) -> None:
    first = load_fixture(fixture_copy).content_hash()
    assert first == load_fixture(fixture_copy).content_hash()
    assert len(first) == 64 and int(first, 16) >= 0
    for rel in ("fixture.json", "task.txt", "shards/events-05.jsonl"):
        target = fixture_copy / rel
        original = target.read_bytes()
        target.write_bytes(original + b"\n")
        assert load_fixture(fixture_copy).content_hash() != first, rel
        target.write_bytes(original)
    assert load_fixture(fixture_copy).content_hash() == first


# --- resolve_fixture -------------------------------------------------------------------


def test_resolve_by_name() -> None:
    assert resolve_fixture("json-events") == (FIXTURES_ROOT / "json-events").resolve()


def test_resolve_by_absolute_and_relative_path(
    fixture_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert resolve_fixture(str(fixture_copy)) == fixture_copy.resolve()
    monkeypatch.chdir(fixture_copy.parent)
    assert resolve_fixture("./copy") == fixture_copy.resolve()
    assert resolve_fixture("copy/fixture.json") == fixture_copy.resolve()


def test_resolve_name_under_custom_root(fixture_copy: Path) -> None:
    assert resolve_fixture("copy", root=fixture_copy.parent) == fixture_copy.resolve()


@pytest.mark.parametrize("bad", ["no-such-fixture", "", "   "], ids=["unknown", "empty", "blank"])
def test_resolve_unknown_name(bad: str) -> None:
    with pytest.raises(FixtureError):
        resolve_fixture(bad)


def test_resolve_unknown_name_lists_known_fixtures() -> None:
    with pytest.raises(FixtureError, match="json-events"):
        resolve_fixture("no-such-fixture")


def test_resolve_directory_without_manifest(tmp_path: Path) -> None:
    with pytest.raises(FixtureError, match=r"no fixture\.json") as info:
        resolve_fixture(str(tmp_path))
    assert info.value.path == str(tmp_path)


# --- hostile manifests -------------------------------------------------------------------


def _set_shard(index: int, key: str, value: Any) -> Callable[[Path], None]:
    return lambda p: edit_manifest(p, lambda d: d["shards"][index].__setitem__(key, value))


def _del_shard_key(index: int, key: str) -> Callable[[Path], None]:
    return lambda p: edit_manifest(p, lambda d: d["shards"][index].pop(key))


def _set_top(key: str, value: Any) -> Callable[[Path], None]:
    return lambda p: edit_manifest(p, lambda d: d.__setitem__(key, value))


def _whole(value: Any) -> Callable[[Path], None]:
    return lambda p: (p / "fixture.json").write_text(json.dumps(value))


def _raw(data: bytes) -> Callable[[Path], None]:
    return lambda p: (p / "fixture.json").write_bytes(data)


def _patch_manifest_bytes(old: bytes, new: bytes) -> Callable[[Path], None]:
    def change(p: Path) -> None:
        raw = (p / "fixture.json").read_bytes()
        assert old in raw
        (p / "fixture.json").write_bytes(raw.replace(old, new, 1))

    return change


def _symlink_shard(target: Callable[[Path], Path]) -> Callable[[Path], None]:
    def change(p: Path) -> None:
        shard = p / "shards" / "events-03.jsonl"
        destination = target(p)
        if not destination.exists():
            shutil.copyfile(shard, destination)
        shard.unlink()
        shard.symlink_to(destination)

    return change


def _shard_to_directory(p: Path) -> None:
    (p / "shards" / "events-02.jsonl").unlink()
    (p / "shards" / "events-02.jsonl").mkdir()


def _shards_dir_symlink(p: Path) -> None:
    real = p.parent / "elsewhere"
    shutil.move(p / "shards", real)
    (p / "shards").symlink_to(real, target_is_directory=True)


def _duplicate_file(d: dict[str, Any]) -> None:
    d["shards"][1]["file"] = d["shards"][0]["file"]
    d["shards"][1]["worker"] = d["shards"][0]["worker"]


def _duplicate_file_other_case(d: dict[str, Any]) -> None:
    d["shards"][1]["file"] = "EVENTS-01.jsonl"
    d["shards"][1]["worker"] = "worker-EVENTS-01"


def _drop_task_line(p: Path) -> None:
    task = p / "task.txt"
    lines = task.read_text().splitlines(keepends=True)
    task.write_text("".join(line for line in lines if "shards/events-06.jsonl:" not in line))


def _duplicate_json_key(p: Path) -> None:
    raw = (p / "fixture.json").read_text()
    (p / "fixture.json").write_text(raw.replace("{", '{"name": "shadowed",', 1))


def _symlink_task(p: Path) -> None:
    real = p.parent / "task-elsewhere.txt"
    shutil.move(p / "task.txt", real)
    (p / "task.txt").symlink_to(real)


def _nan_expected(p: Path) -> None:
    raw = (p / "fixture.json").read_text()
    (p / "fixture.json").write_text(re.sub(r'"expected": \d+', '"expected": NaN', raw, count=1))


def _huge_manifest(p: Path) -> None:
    with (p / "fixture.json").open("r+b") as handle:
        handle.truncate(MAX_MANIFEST_BYTES + 1)  # sparse: big on paper, cheap on disk


# (mutation, file relative to the fixture, field, a word the message must contain)
HOSTILE = [
    pytest.param(_del_shard_key(2, "worker"), "fixture.json", "shards[2].worker", "required",
                 id="schema-missing-shard-key"),
    pytest.param(lambda p: edit_manifest(p, lambda d: d.pop("artifact")), "fixture.json",
                 "artifact", "required", id="schema-missing-top-key"),
    pytest.param(_set_shard(1, "question", 5), "fixture.json", "shards[1].question", "string",
                 id="schema-question-not-string"),
    pytest.param(_set_top("name", ["json-events"]), "fixture.json", "name", "string",
                 id="schema-name-not-string"),
    pytest.param(_set_shard(0, "file", "../fixture.json"), "fixture.json", "shards[0].file",
                 "escapes", id="dotdot-escape"),
    pytest.param(_set_shard(0, "file", "..\\events-01.jsonl"), "fixture.json", "shards[0].file",
                 "escapes", id="dotdot-backslash-escape"),
    pytest.param(_set_shard(0, "file", "/etc/passwd"), "fixture.json", "shards[0].file",
                 "absolute", id="absolute-path"),
    pytest.param(_set_shard(0, "file", "C:evil.jsonl"), "fixture.json", "shards[0].file",
                 "absolute", id="windows-drive-path"),
    pytest.param(_set_shard(0, "file", "sub\\events-01.jsonl"), "fixture.json",
                 "shards[0].file", "separator", id="path-separator"),
    pytest.param(_set_shard(0, "file", ".hidden.jsonl"), "fixture.json", "shards[0].file",
                 "safe shard path", id="hidden-file-name"),
    pytest.param(_set_shard(0, "file", "sub/.hidden.jsonl"), "fixture.json", "shards[0].file",
                 "safe shard path", id="hidden-in-a-sub-folder"),
    pytest.param(_set_shard(0, "file", "sub/events-01.jsonl"), "shards/sub/events-01.jsonl",
                 "shards[0].file", "missing", id="nested-shard-missing"),
    pytest.param(_symlink_shard(lambda p: p.parent / "outside.jsonl"), "shards/events-03.jsonl",
                 "shards[2].file", "symlink", id="symlink-outside"),
    pytest.param(_symlink_shard(lambda p: p / "shards" / "events-01.jsonl"),
                 "shards/events-03.jsonl", "shards[2].file", "symlink", id="symlink-inside"),
    pytest.param(_shards_dir_symlink, "shards", "$", "symlink", id="shards-dir-symlink"),
    pytest.param(lambda p: (p / "shards" / "events-04.jsonl").unlink(), "shards/events-04.jsonl",
                 "shards[3].file", "missing", id="missing-shard-file"),
    pytest.param(_shard_to_directory, "shards/events-02.jsonl", "shards[1].file", "directory",
                 id="shard-is-directory"),
    pytest.param(_set_shard(1, "worker", "worker-events-01"), "fixture.json",
                 "shards[1].worker", "duplicates", id="duplicate-worker"),
    pytest.param(lambda p: edit_manifest(p, _duplicate_file), "fixture.json", "shards[1].file",
                 "duplicates", id="duplicate-file"),
    pytest.param(lambda p: edit_manifest(p, _duplicate_file_other_case), "fixture.json",
                 "shards[1].file", "duplicates", id="duplicate-file-case-insensitive"),
    pytest.param(_set_top("shards", []), "fixture.json", "shards", "at least 1",
                 id="empty-shard-list"),
    pytest.param(_set_shard(4, "worker", "worker-events-99"), "fixture.json", "shards[4].worker",
                 "worker-events-05", id="worker-not-matching-stem"),
    pytest.param(_patch_manifest_bytes(b"json-events", b"json-\xffevents"), "fixture.json", "$",
                 "UTF-8 at line 2", id="non-utf8-bytes"),
    pytest.param(_patch_manifest_bytes(b"json-events", b"json-\x00events"), "fixture.json", "$",
                 "NUL byte at line 2", id="nul-byte"),
    pytest.param(_raw(b'{"name": "x",\n  "shards": [,]}'), "fixture.json", "$", "line 2",
                 id="invalid-json"),
    pytest.param(_raw(b""), "fixture.json", "$", "line 1", id="empty-manifest"),
    pytest.param(_huge_manifest, "fixture.json", "$", "limit", id="huge-manifest"),
    pytest.param(_raw(b"[" * 100_000 + b"]" * 100_000), "fixture.json", "$", "nested",
                 id="deeply-nested-json"),
    pytest.param(_duplicate_json_key, "fixture.json", "name", "more than once",
                 id="duplicate-json-key"),
    pytest.param(_whole([{"name": "json-events"}]), "fixture.json", "$", "not an array",
                 id="document-is-list"),
    pytest.param(_whole("json-events"), "fixture.json", "$", "not a string",
                 id="document-is-string"),
    pytest.param(_set_top("shards", {"events-01.jsonl": {}}), "fixture.json", "shards",
                 "not an object", id="shards-is-object"),
    pytest.param(_set_shard(3, "expected", 2.5), "fixture.json", "shards[3].expected",
                 "not a number", id="expected-float"),
    pytest.param(_set_shard(3, "expected", 285.0), "fixture.json", "shards[3].expected",
                 "285.0", id="expected-integral-float"),
    pytest.param(_set_shard(3, "expected", True), "fixture.json", "shards[3].expected",
                 "not a boolean", id="expected-bool"),
    pytest.param(_set_shard(3, "expected", None), "fixture.json", "shards[3].expected",
                 "not null", id="expected-null"),
    pytest.param(_set_shard(3, "expected", [1]), "fixture.json", "shards[3].expected",
                 "not an array", id="expected-list"),
    pytest.param(_set_shard(3, "expected", ""), "fixture.json", "shards[3].expected",
                 "empty", id="expected-empty-string"),
    pytest.param(_set_shard(3, "expected", "12\n"), "fixture.json", "shards[3].expected",
                 "one line", id="expected-multiline-string"),
    pytest.param(_nan_expected, "fixture.json", "$", "NaN", id="expected-nan"),
    pytest.param(_set_shard(0, "question", "How many?\nIgnore that."), "fixture.json",
                 "shards[0].question", "one line", id="multiline-question"),
    pytest.param(_set_top("artifact", "../combined-index.md"), "fixture.json", "artifact",
                 "escapes", id="artifact-escapes"),
    pytest.param(_set_top("artifact", "out/combined-index.md"), "fixture.json", "artifact",
                 "separator", id="artifact-path"),
    pytest.param(_set_top("artifact", "fixture.json"), "fixture.json", "artifact", "reserved",
                 id="artifact-overwrites-key"),
    pytest.param(_set_top("artifact", "task.txt"), "fixture.json", "artifact", "reserved",
                 id="artifact-overwrites-task"),
    pytest.param(_set_top("artifact", ""), "fixture.json", "artifact", "empty",
                 id="artifact-empty"),
    pytest.param(lambda p: (p / "task.txt").unlink(), "task.txt", "$", "missing",
                 id="missing-task"),
    pytest.param(lambda p: (p / "task.txt").write_bytes(b"Answer \xfe\n"), "task.txt", "$",
                 "UTF-8", id="task-not-utf8"),
    pytest.param(lambda p: (p / "task.txt").write_text(" \n\n"), "task.txt", "$", "empty",
                 id="task-empty"),
    pytest.param(_symlink_task, "task.txt", "$", "symlink", id="task-symlink"),
    pytest.param(_drop_task_line, "task.txt", "shards[5]", "does not name this shard",
                 id="task-missing-shard"),
    pytest.param(lambda p: replace_text(p / "task.txt", "(worker: worker-events-03)",
                                        "(worker: worker-events-3)"),
                 "task.txt", "shards[2].worker", "worker-events-03", id="task-wrong-worker"),
    pytest.param(lambda p: replace_text(p / "task.txt", "bytes greater than 5000?",
                                        "bytes greater than 500?"),
                 "task.txt", "shards[0]", "does not name this shard", id="task-other-question"),
    pytest.param(lambda p: replace_text(p / "task.txt", "- shards/events-06.jsonl:",
                                        "- data/shards/events-06.jsonl:"),
                 "task.txt", "shards[5]", "does not name this shard", id="task-mention-in-longer-path"),
    pytest.param(lambda p: replace_text(p / "task.txt", "(worker: worker-events-03)",
                                        "(worker: worker-events-03x)"),
                 "task.txt", "shards[2].worker", "worker-events-03", id="task-worker-glued-to-word"),
    pytest.param(lambda p: (p / "task.txt").write_text((p / "task.txt").read_text()
                                                       + "x" * fx.MAX_ARG_STRLEN),
                 "task.txt", "$", "MAX_ARG_STRLEN", id="task-over-argv-limit"),
]  # fmt: skip


def test_task_at_the_argv_limit_is_accepted(fixture_copy: Path) -> None:
    task = fixture_copy / "task.txt"
    text = task.read_bytes()
    task.write_bytes(text + b"x" * (fx.MAX_ARG_STRLEN - 1 - len(text)))
    assert validate_fixture(fixture_copy) == []


def test_dotted_worker_is_found_on_its_line(fixture_copy: Path) -> None:
    """A worker with a dot (a dotted file stem) is matched by the exact boundary rule."""
    rename_shard(fixture_copy, 0, "events.v1-01.jsonl")
    assert validate_fixture(fixture_copy) == []
    replace_text(fixture_copy / "task.txt", "(worker: worker-events.v1-01)", "(worker: none)")
    fields = [p.field for p in validate_fixture(fixture_copy)]
    assert fields == ["shards[0].worker"]


@pytest.mark.parametrize(("mutate", "rel_file", "field", "word"), HOSTILE)
def test_hostile_fixture_is_refused(
    fixture_copy: Path,
    mutate: Callable[[Path], None],
    rel_file: str,
    field: str,
    word: str,
) -> None:
    mutate(fixture_copy)
    problems = validate_fixture(fixture_copy)
    matching = [p for p in problems if p.file == fixture_copy / rel_file and p.field == field]
    assert matching, f"no problem at {rel_file} {field}; got: {[str(p) for p in problems]}"
    assert any(word in p.message for p in matching), [p.message for p in matching]
    with pytest.raises(FixtureError) as info:
        load_fixture(fixture_copy)
    assert info.value.path == str(problems[0].file)
    assert str(problems[0].file) in str(info.value) and problems[0].field in str(info.value)


def test_extra_keys_are_allowed(fixture_copy: Path) -> None:
    def add_extras(d: dict[str, Any]) -> None:
        d["owner"] = "fixtures team"
        d["shards"][0]["notes"] = {"difficulty": 3}

    before = load_fixture(fixture_copy).manifest
    edit_manifest(fixture_copy, add_extras)
    assert validate_fixture(fixture_copy) == []
    assert load_fixture(fixture_copy).manifest == before


def test_string_expected_is_allowed(fixture_copy: Path) -> None:
    edit_manifest(fixture_copy, lambda d: d["shards"][0].__setitem__("expected", "25 events"))
    assert validate_fixture(fixture_copy) == []
    assert load_fixture(fixture_copy).manifest.shards[0].expected == "25 events"


def test_every_problem_is_reported_not_just_the_first(fixture_copy: Path) -> None:
    def break_many(d: dict[str, Any]) -> None:
        d["artifact"] = "../x.md"
        d["shards"][1]["worker"] = "worker-nope"
        d["shards"][6].pop("question")
        d["shards"][7]["file"] = "/etc/passwd"

    edit_manifest(fixture_copy, break_many)
    _symlink_shard(lambda p: p / "shards" / "events-01.jsonl")(fixture_copy)
    (fixture_copy / "shards" / "events-05.jsonl").unlink()
    found = {(p.file.relative_to(fixture_copy).as_posix(), p.field) for p in
             validate_fixture(fixture_copy)}  # fmt: skip
    assert {
        ("fixture.json", "artifact"),
        ("fixture.json", "shards[1].worker"),
        ("fixture.json", "shards[6].question"),
        ("fixture.json", "shards[7].file"),
        ("shards/events-03.jsonl", "shards[2].file"),
        ("shards/events-05.jsonl", "shards[4].file"),
    } <= found


def test_missing_manifest_and_not_a_directory(tmp_path: Path) -> None:
    first = validate_fixture(tmp_path)[0]
    assert (first.file, first.field) == (tmp_path / "fixture.json", "$")
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    assert [(p.file, p.field) for p in validate_fixture(a_file)] == [(a_file, "$")]


def test_huge_manifest_is_not_read(fixture_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _huge_manifest(fixture_copy)
    opened: list[str] = []
    real_open = Path.open

    def spy(self: Path, *args: Any, **kwargs: Any) -> Any:
        opened.append(self.name)
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", spy)
    problems = validate_fixture(fixture_copy)
    assert problems[0].file == fixture_copy / "fixture.json"
    assert "fixture.json" not in opened


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_shard_is_refused_without_blocking(fixture_copy: Path) -> None:
    shard = fixture_copy / "shards" / "events-08.jsonl"
    shard.unlink()
    os.mkfifo(shard)
    problems = validate_fixture(fixture_copy)
    assert [(p.file, p.field) for p in problems] == [(shard, "shards[7].file")]


def test_schema_file_is_a_valid_draft_2020_12_schema() -> None:
    schema = json.loads(fx.SCHEMA_PATH.read_text())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert fx._validator() is not None  # check_schema passed


# --- the fast schema check agrees with jsonschema ---------------------------------------


def _mutations(data: dict[str, Any]) -> list[Any]:
    """Manifests broken in one place each, the way the hostile-manifest tests break them."""
    out: list[Any] = [[], "manifest", None]
    for key in list(data):
        dropped = dict(data)
        del dropped[key]
        out.append(dropped)
        for wrong in (None, 7, "x", [], {}, True, -1, 1.5, ""):
            out.append({**data, key: wrong})
    out.append({**data, "unexpected": 1})
    shard = data["shards"][0]
    for key in list(shard):
        for wrong in (None, 7, "", [], {}, -1):
            out.append({**data, "shards": [{**shard, key: wrong}, *data["shards"][1:]]})
    out.append({**data, "shards": []})
    return out


def test_every_committed_fixture_passes_the_fast_schema_check() -> None:
    paths = sorted(FIXTURES_ROOT.glob("*/fixture.json"))
    assert len(paths) >= 10
    for path in paths:
        assert fx._fast_validator().is_valid(json.loads(path.read_text())), path


#: One fixture per answer kind (integer, decimal, string): the schema is the same for all,
#: the expected answers' types are what differ.
AGREEMENT_FIXTURES = ("json-events", "csv-prices", "markdown-handbook")


@pytest.mark.parametrize("name", AGREEMENT_FIXTURES)
def test_the_fast_schema_check_agrees_with_jsonschema(name: str) -> None:
    """A manifest the fast check (jsonschema-rs) passes is one jsonschema passes, and the
    reverse, on a committed fixture and about a hundred one-place breakages of it."""
    data = json.loads((FIXTURES_ROOT / name / "fixture.json").read_text())
    cases = [data, *_mutations(data)]
    disagree = [
        case
        for case in cases
        if fx._fast_validator().is_valid(case) != (not list(fx._validator().iter_errors(case)))
    ]
    assert disagree == []
    rejected = sum(not fx._fast_validator().is_valid(c) for c in cases)
    assert rejected >= 40 and fx._fast_validator().is_valid(data)  # both answers occur
