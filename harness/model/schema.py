"""``report.schema.json``, generated from the report model's type hints.

The schema is derived from the same hints the codec reads (:mod:`scorers.codec`), so the
file a consumer validates against can never drift from what the harness writes. The
committed file is regenerated with ``python -m harness.model.schema`` and a test fails
when it is stale.

Each record becomes a closed object (every field required, no other field), ``X | None``
an ``anyOf`` with null, ``tuple[X, ...]`` an array, ``dict[str, X]`` an object of X,
``Literal`` an ``enum``. Fields a record adds to its JSON beyond its dataclass fields
(derived values written for readers, e.g. an item's ``status``) are declared in its
``JSON_EXTRA``.

Each record's docstring becomes its ``description`` and each field's ``#:`` comment (the
lines right above it in the class) the field's, so the reference page generated from the
schema (``docs/reference/report-json.md``) says what the model's source says.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
import sys
import textwrap
import types
import typing
from pathlib import Path
from typing import Any, Literal, get_args, get_origin, get_type_hints

SCHEMA_ID = "https://swarm-harness.local/schemas/report.schema.json"


def _def_name(cls: type) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in cls.__name__).lstrip("_")


def _record_doc(cls: type) -> str | None:
    """The record's own docstring, dedented (None: none, or only the one dataclass writes)."""
    doc = cls.__dict__.get("__doc__")
    if not doc or doc.startswith(f"{cls.__name__}("):
        return None
    return inspect.cleandoc(doc)


def _field_docs(cls: type) -> dict[str, str]:
    """Each field's ``#:`` comment: the comment lines right above its annotation."""
    try:
        lines, _ = inspect.getsourcelines(cls)
    except (OSError, TypeError):
        return {}
    source = textwrap.dedent("".join(lines))
    body = [line.strip() for line in source.splitlines()]
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.ClassDef)
    docs: dict[str, str] = {}
    for stmt in node.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        comment: list[str] = []
        row = stmt.lineno - 2
        while row >= 0 and body[row].startswith("#:"):
            comment.insert(0, body[row][2:].strip())
            row -= 1
        if comment:
            docs[stmt.target.id] = " ".join(comment)
    return docs


class _Builder:
    def __init__(self) -> None:
        self.defs: dict[str, dict[str, Any]] = {}

    def hint(self, hint: object) -> dict[str, Any]:
        if hint is Any or hint is object:
            return {}
        origin = get_origin(hint)
        if origin in (typing.Union, types.UnionType):
            return {"anyOf": [self.hint(arg) for arg in get_args(hint)]}
        if origin is Literal:
            return {"enum": list(get_args(hint))}
        if origin is tuple:
            args = get_args(hint)
            if len(args) == 2 and args[1] is Ellipsis:
                return {"type": "array", "items": self.hint(args[0])}
            return {
                "type": "array",
                "prefixItems": [self.hint(a) for a in args],
                "minItems": len(args),
                "maxItems": len(args),
            }
        if origin is dict:
            return {"type": "object", "additionalProperties": self.hint(get_args(hint)[1])}
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            return self.record(hint)
        return {
            type(None): {"type": "null"},
            int: {"type": "integer"},
            float: {"type": "number"},
            bool: {"type": "boolean"},
            str: {"type": "string"},
        }[typing.cast(type, hint)]

    def record(self, cls: type) -> dict[str, Any]:
        name = _def_name(cls)
        if name not in self.defs:
            self.defs[name] = {}  # placeholder: a record may (indirectly) hold itself
            hints = get_type_hints(cls)
            docs = _field_docs(cls)
            props: dict[str, dict[str, Any]] = {}
            for field in dataclasses.fields(cls):
                prop = self.hint(hints[field.name])
                if field.name in docs:
                    prop = {"description": docs[field.name], **prop}
                props[field.name] = prop
            props.update(getattr(cls, "JSON_EXTRA", {}))
            doc = _record_doc(cls)
            self.defs[name] = {
                **({"description": doc} if doc else {}),
                "type": "object",
                "additionalProperties": False,
                "required": list(props),
                "properties": props,
            }
        return {"$ref": f"#/$defs/{name}"}


def json_schema(root: type, title: str) -> dict[str, Any]:
    builder = _Builder()
    ref = builder.record(root)
    name = ref["$ref"].rsplit("/", 1)[1]
    top = builder.defs[name]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": title,
        **top,
        "$defs": {k: v for k, v in sorted(builder.defs.items()) if k != name},
    }


def report_schema_text() -> str:
    from harness.model.report import RunReport

    schema = json_schema(RunReport, "swarm-harness report.json")
    return json.dumps(schema, indent=2) + "\n"


def main() -> int:
    from harness.model.report import REPORT_SCHEMA_PATH

    Path(REPORT_SCHEMA_PATH).write_text(report_schema_text(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
