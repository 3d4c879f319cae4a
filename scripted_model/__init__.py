"""A scripted, OpenAI-compatible model server that drives the real prime-agent CLI.

Stateless: every ``/v1/chat/completions`` request carries the whole conversation, so the
next turn is derived from it alone and children can call concurrently. The model id picks
the script (``honest``, ``no-spawn``, ...); answers come from the fixture manifests
(an oracle, like the simulated agent), never from solving the task.
"""

from __future__ import annotations

from scripted_model.oracle import Oracle
from scripted_model.scripts import SCRIPTS, Script
from scripted_model.server import PROVIDER, Bill, ScriptedModelServer, models_json

__all__ = ["PROVIDER", "SCRIPTS", "Bill", "Oracle", "Script", "ScriptedModelServer", "models_json"]
