"""The simulated agent (``--agent sim[:BEHAVIOURS]``): prime-agent's stand-in.

``sim_agent`` (its own package) is a real executable that behaves like prime-agent per the
contract: same argv, daemon, ledger, sessions and stream. So this adapter is prime-agent's,
launched with the sim's script and handed the answers out of band (an oracle file outside
the repo): a stand-in for the model, not for the harness. It needs no ``--model``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import sim_agent
from harness.agents.base import ItemPaths, ItemSpec, Launch
from harness.agents.prime_agent import PrimeAgentAdapter
from harness.errors import UsageError
from sim_agent.config import ORACLE_VAR, SimUsageError, parse_behaviours

SIM_SCRIPT = Path(sim_agent.__file__).resolve().parent / "agent.py"
#: The model label of a simulated run: it reaches no model, so it is named as such.
SIM_MODEL = "sim/oracle"
DEFAULT_BEHAVIOURS = "honest"


class SimAdapter(PrimeAgentAdapter):
    name: ClassVar[str] = "sim"
    takes_options: ClassVar[bool] = True  # the behaviours
    default_binary: ClassVar[str | None] = None
    model_api: ClassVar[str | None] = None

    def __init__(self, options: str = "", binary: str | None = None, seed: int = 0) -> None:
        behaviours = options or DEFAULT_BEHAVIOURS
        try:
            parse_behaviours(behaviours)
        except SimUsageError as exc:
            raise UsageError(f"--agent sim:{behaviours}: {exc}") from None
        super().__init__(behaviours, None, seed)

    def label(self) -> str:
        return f"sim:{self.options}"

    @property
    def simulated(self) -> bool:
        return True

    def default_models(self) -> tuple[str, ...]:
        return (SIM_MODEL,)

    def scripted_endpoint(
        self, base_url: str, models_json: Mapping[str, Any], home: Path
    ) -> dict[str, str]:
        raise UsageError("the simulated agent talks to no model server")

    def preflight(self, env: Mapping[str, str]) -> list[tuple[str, bool, str]]:
        return [("credentials", True, f"none needed by the simulated agent ({self.options})")]

    def resolve_command(self) -> list[str]:
        # -S: the sim is standard-library only; skipping site halves its start-up.
        return [sys.executable, "-S", str(SIM_SCRIPT)]

    def prepare(
        self, paths: ItemPaths, item: ItemSpec, base_env: Mapping[str, str], token: str
    ) -> Launch:
        launch = super().prepare(paths, item, base_env, token)
        oracle = {
            "behaviours": self.options,
            "seed": self.seed,
            "key": item.key,
            "artifact": item.manifest.artifact,
            "shards": [
                {"file": s.file, "worker": s.worker, "expected": s.expected}
                for s in item.manifest.shards
            ],
        }
        path = paths.root / "sim-oracle.json"
        path.write_text(json.dumps(oracle), encoding="utf-8")
        launch.env[ORACLE_VAR] = str(path)
        return launch
