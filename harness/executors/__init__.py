"""Where work items run: one executor module each, one registry line each.

``--executor NAME`` picks one; executors are imported only when used, so Ray (an optional
extra) loads only for Ray runs and the plain install never needs it.
"""

from __future__ import annotations

import importlib

from harness.errors import UsageError
from harness.executors.base import Executor
from harness.plan import ExecutorSettings

#: name -> "module:class". Adding an executor: one module here, one line in this table.
REGISTRY: dict[str, str] = {
    "local": "harness.executors.local:LocalExecutor",
    "ray": "harness.executors.ray:RayExecutor",
}

DEFAULT_EXECUTOR = "local"


def executor_for(settings: ExecutorSettings) -> Executor:
    """The executor ``settings.name`` names; an unknown name raises UsageError."""
    try:
        module_name, _, attr = REGISTRY[settings.name].partition(":")
    except KeyError:
        known = ", ".join(sorted(REGISTRY))
        raise UsageError(
            f"--executor: unknown executor {settings.name!r} (known: {known})"
        ) from None
    cls = getattr(importlib.import_module(module_name), attr)
    if not (isinstance(cls, type) and issubclass(cls, Executor)):
        raise TypeError(f"{REGISTRY[settings.name]} is not an Executor")
    executor: Executor = cls(settings)
    return executor


__all__ = ["DEFAULT_EXECUTOR", "REGISTRY", "Executor", "ExecutorSettings", "executor_for"]
