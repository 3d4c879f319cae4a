"""Defaults from ``harness.yaml`` in the working directory (click default_map for ``run``).

Keys are the long option names of ``run`` with dashes or underscores, e.g.::

    run:
      fixture: [json-events, csv-metrics]
      model: [anthropic/claude-sonnet-4-5]
      agent: [claude-code, opencode]
      trials: 5
      concurrency: 4
      provider-cap: ["anthropic=2"]

Command-line options and their SWARM_HARNESS_* environment twins override these.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from harness.errors import UsageError

CONFIG_FILE = "harness.yaml"
CONFIG_ENV = "SWARM_HARNESS_CONFIG"

_STR_LIST = {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}
_RUN_KEYS: dict[str, Any] = {
    "fixture": _STR_LIST,
    "model": _STR_LIST,
    "provider_cap": _STR_LIST,
    "agent": _STR_LIST,
    "agent_bin": _STR_LIST,
    "timeout": {"type": "number", "exclusiveMinimum": 0},
    "runs_dir": {"type": "string"},
    "keep_workdir": {"type": "boolean"},
    "solo": {"type": "boolean"},
    "trials": {"oneOf": [{"type": "integer", "minimum": 1}, {"const": "auto"}]},
    "max_trials": {"type": "integer", "minimum": 1},
    "min_trials": {"type": "integer", "minimum": 1},
    "precision": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
    "concurrency": {"type": "integer", "minimum": 1},
    "seed": {"type": "integer"},
    "threshold": {"type": "number", "minimum": 0, "exclusiveMaximum": 1},
    "fail_on": _STR_LIST,
    "cost_threshold": {"type": "number", "minimum": 0},
    "prices": {"type": "string"},
    "max_cost": {"type": "number", "exclusiveMinimum": 0},
    "max_tokens": {"type": "integer", "minimum": 1},
}
_PARAM_NAMES = {
    "fixture": "fixtures",
    "model": "models",
    "provider_cap": "provider_caps",
    "agent": "agents",
    "agent_bin": "agent_bins",
}
SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "run": {"type": "object", "additionalProperties": False, "properties": _RUN_KEYS},
    },
}


def _normalise(data: Any) -> Any:
    if isinstance(data, dict):
        return {str(k).replace("-", "_"): _normalise(v) for k, v in data.items()}
    return data


def load_default_map(path: Path | None = None) -> dict[str, Any]:
    """Read and validate the config; missing file -> no defaults."""
    if path is None:
        configured = os.environ.get(CONFIG_ENV)
        path = Path(configured) if configured else Path.cwd() / CONFIG_FILE
        if not configured and not path.is_file():
            return {}
    # Loaded only when there is a config to read: most commands start without one.
    import jsonschema
    import yaml

    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise UsageError(f"{path}: no such config file") from exc
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise UsageError(f"{path}: not valid YAML ({exc})") from exc
    data = _normalise(raw if raw is not None else {})
    errors = sorted(
        jsonschema.Draft202012Validator(SCHEMA).iter_errors(data), key=lambda e: list(e.path)
    )
    if errors:
        err = errors[0]
        where = ".".join(str(p) for p in err.path) or "(top level)"
        if err.validator == "additionalProperties":
            return _raise(path, where, f"unknown key ({err.message})")
        return _raise(path, where, err.message)
    run = dict(data.get("run", {}))
    for key in ("fixture", "model", "provider_cap", "fail_on", "agent", "agent_bin"):
        if isinstance(run.get(key), str):
            run[key] = [run[key]]
    # click's default_map is keyed by parameter names, which are plural for repeatables.
    run = {_PARAM_NAMES.get(k, k): v for k, v in run.items()}
    return {"run": run} if run else {}


def _raise(path: Path, where: str, message: str) -> dict[str, Any]:
    raise UsageError(f"{path}: {where}: {message}")
