"""A Codex model catalog: the metadata Codex gives a model its bundled catalog lacks.

Codex (0.171.0) picks a model's tools from its catalog entry. A model it has no entry for
gets fallback metadata: the first multi-agent protocol's tools and ``exec_command``, but no
``apply_patch``, the edit tool every model of its bundled catalog has (a freeform tool: the
patch is the call's whole input). ``config.toml``'s ``model_catalog_json`` names a catalog
file that replaces the bundled one. The harness writes one only when the caller names a
catalog (:data:`CATALOG_VAR`); the selftest names one for its scripted models, so they edit
with ``apply_patch`` as OpenAI's models do.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

#: The variable naming a catalog file (JSON, Codex's ``{"models": [...]}``) the items'
#: ``config.toml`` points Codex at; unset: Codex's bundled catalog.
CATALOG_VAR = "CODEX_MODEL_CATALOG"
#: The item's copy of it, below ``CODEX_HOME``.
CATALOG_FILE = "model-catalog.json"

#: One scripted model's entry: the fields Codex 0.171.0 requires, with the tool surface of
#: its catalog models (``apply_patch`` freeform, ``exec_command``) and the multi-agent
#: tools offered directly (``supports_search_tool`` false: a catalog model reaches them
#: through ``tool_search``, which a scripted model does not play).
_ENTRY: Mapping[str, Any] = {
    "apply_patch_tool_type": "freeform",
    "shell_type": "shell_command",
    "supports_search_tool": False,
    "supported_reasoning_levels": [],
    "visibility": "list",
    "supported_in_api": True,
    "priority": 100,
    "support_verbosity": False,
    "truncation_policy": {"mode": "tokens", "limit": 10000},
    "experimental_supported_tools": [],
    "base_instructions": "You are Codex, a coding agent. A scripted model plays you here.",
}


def scripted_catalog(models: Iterable[str]) -> dict[str, Any]:
    """A catalog with one entry per model name, each with Codex's edit tool."""
    return {
        "models": [{"slug": m, "display_name": f"Scripted {m}", **_ENTRY} for m in sorted(models)]
    }


def write_catalog(path: Path, models: Iterable[str]) -> Path:
    path.write_text(json.dumps(scripted_catalog(models), indent=1) + "\n", encoding="utf-8")
    return path


def copy_catalog(env: Mapping[str, str], codex_home: Path) -> Path | None:
    """The caller's catalog (:data:`CATALOG_VAR`) copied into the item's ``CODEX_HOME``
    (None: the caller names none)."""
    source = env.get(CATALOG_VAR)
    if not source:
        return None
    target = codex_home / CATALOG_FILE
    shutil.copyfile(source, target)
    return target
