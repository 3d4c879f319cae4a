"""The simulated agent (``--agent sim[:BEHAVIOURS]``): prime-agent's stand-in.

``sim_agent`` (its own package) is a real executable that behaves like prime-agent per the
contract: same argv, daemon, ledger, sessions and stream. So this adapter is prime-agent's,
launched with the sim's script and handed the answers out of band (an oracle file outside
the repo): a stand-in for the model, not for the harness. It calls no model: its "models"
are behaviours, ``sim/BEHAVIOURS``, so one run compares behaviours as it would compare
models (``--model sim/honest --model sim/no-spawn``). ``--agent sim:BEHAVIOURS`` sets what
every model's behaviours start from; a model's own behaviours win over them, and
``resident`` among them picks prime-agent's resident drive (``--agent sim:resident``).
Its solo twin (``run --solo``) plays every model's behaviours with the ``solo`` plan
(``sim_agent.config.twin_behaviours``): it reads every shard itself, one after another.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import sim_agent
from harness.agents.base import ItemPaths, ItemSpec, Launch, check_model_syntax
from harness.agents.prime_agent import RESIDENT, PrimeAgentAdapter
from harness.errors import UsageError
from sim_agent.config import (
    ORACLE_VAR,
    SimUsageError,
    merge_behaviours,
    parse_behaviours,
    twin_behaviours,
)

SIM_SCRIPT = Path(sim_agent.__file__).resolve().parent / "agent.py"
#: Models of the sim are behaviours: ``sim/<behaviours>``.
SIM_PROVIDER = "sim"
DEFAULT_BEHAVIOURS = "honest"
#: The model label runs before per-model behaviours carried: the agent's own behaviours.
LEGACY_MODEL = "sim/oracle"


class SimAdapter(PrimeAgentAdapter):
    name: ClassVar[str] = "sim"
    takes_options: ClassVar[bool] = True  # the behaviours
    default_binary: ClassVar[str | None] = None
    model_api: ClassVar[str | None] = None
    binary_env: ClassVar[str | None] = None
    install_hint: ClassVar[str] = "the simulated agent is part of the harness"

    def __init__(self, options: str = "", binary: str | None = None, seed: int = 0) -> None:
        if binary is not None:
            raise UsageError(
                f"--agent-bin {binary}: the simulated agent is part of the harness and runs "
                "no other binary; leave --agent-bin out (or pick a real agent with --agent)"
            )
        #: The behaviours every model's items start from (``resident`` names the drive).
        self.base_behaviours = ",".join(
            b for b in (x.strip() for x in options.split(",")) if b and b != RESIDENT
        )
        try:
            parse_behaviours(self.base_behaviours)
        except SimUsageError as exc:
            raise UsageError(f"--agent sim:{options}: {exc}") from None
        super().__init__(options, None, seed)

    def _drive_option(self, options: str) -> str:
        return RESIDENT if RESIDENT in (x.strip() for x in options.split(",")) else ""

    @property
    def simulated(self) -> bool:
        return True

    def default_models(self) -> tuple[str, ...]:
        return (f"{SIM_PROVIDER}/{self.base_behaviours or DEFAULT_BEHAVIOURS}",)

    def behaviours_for(self, model: str) -> str:
        """The behaviours one model's items run: the agent's, then the model's own; the
        solo twin's play them with the ``solo`` plan (``sim/honest,slow=2`` ->
        ``solo,slow=2``)."""
        own = "" if model == LEGACY_MODEL else model.partition("/")[2]
        spec = merge_behaviours(self.base_behaviours, own) or DEFAULT_BEHAVIOURS
        return twin_behaviours(spec) if self.solo else spec

    def check_model(self, model: str) -> None:
        check_model_syntax(model)
        if not model.startswith(f"{SIM_PROVIDER}/"):
            raise UsageError(
                f"--model {model}: the simulated agent calls no model, and its results must "
                f"not carry a real model's name; its models are behaviours, "
                f"{SIM_PROVIDER}/BEHAVIOURS (e.g. sim/honest, sim/no-spawn, sim/flaky=0.5)"
            )
        try:
            parse_behaviours(self.behaviours_for(model))
        except SimUsageError as exc:
            raise UsageError(f"--model {model}: {exc}") from None

    def scripted_endpoint(
        self,
        base_url: str,
        models_json: Mapping[str, Any],
        home: Path,
        models: Sequence[str] = (),
    ) -> dict[str, str]:
        raise UsageError("the simulated agent talks to no model server")

    def preflight(
        self, env: Mapping[str, str], agent_home: Path | None = None
    ) -> list[tuple[str, bool, str]]:
        return [("credentials", True, "none needed by the simulated agent")]

    def agent_command(self) -> list[str]:
        # -S: the sim is standard-library only; skipping site halves its start-up.
        return [sys.executable, "-S", str(SIM_SCRIPT)]

    def prepare(
        self, paths: ItemPaths, item: ItemSpec, base_env: Mapping[str, str], token: str
    ) -> Launch:
        launch = super().prepare(paths, item, base_env, token)
        # The manifest as item.json keeps it (an edit fixture's kind, shared files and each
        # shard's owned files, checks and solution included), plus how to behave.
        manifest = item.manifest.to_dict()
        oracle = {
            "behaviours": self.behaviours_for(item.model),
            "seed": self.seed,
            "key": item.key,
            "attempt": item.attempt,
            "artifact": manifest["artifact"],
            "kind": manifest.get("kind", "read"),
            "shared": manifest.get("shared", []),
            "shards": [
                {
                    k: s[k]
                    for k in ("file", "worker", "expected", "owns", "checks", "solution")
                    if k in s
                }
                for s in manifest["shards"]
            ],
        }
        path = paths.root / "sim-oracle.json"
        path.write_text(json.dumps(oracle), encoding="utf-8")
        launch.env[ORACLE_VAR] = str(path)
        return launch
