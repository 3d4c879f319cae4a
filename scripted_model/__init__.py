"""A scripted, OpenAI-compatible model server that drives the real prime-agent CLI.

It also serves the Anthropic Messages API, scripted for Claude Code's tools and for
opencode's (``SCRIPTS_BY_API``: the scripts of each model API an agent may speak).

Stateless: every ``/v1/chat/completions`` request carries the whole conversation, so the
next turn is derived from it alone and children can call concurrently. The model id picks
the script (``honest``, ``no-spawn``, ...); answers come from the fixture manifests
(an oracle, like the simulated agent), never from solving the task.
"""

from __future__ import annotations

from scripted_model.bill import Bill
from scripted_model.oracle import Oracle
from scripted_model.scripts import SCRIPTS, Script
from scripted_model.server import (
    PROVIDER,
    SCRIPTS_BY_API,
    ScriptedModelServer,
    models_json,
)

__all__ = [
    "PROVIDER",
    "SCRIPTS",
    "SCRIPTS_BY_API",
    "Bill",
    "Oracle",
    "Script",
    "ScriptedModelServer",
    "models_json",
]
