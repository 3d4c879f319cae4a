"""Options with an environment twin named after the option, and options shared by commands.

Every option of every command reads ``SWARM_HARNESS_<COMMAND>_<OPTION>``, built from the
command path and the option's *long name* (``run --compare-baseline`` ->
``SWARM_HARNESS_RUN_COMPARE_BASELINE``), never from the Python parameter name (click's
default, which gave ``--model`` the twin ``..._RUN_MODELS``). ``--help`` shows each twin.
Repeatable options split their variable on whitespace.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

ENV_PREFIX = "SWARM_HARNESS"


class TwinOption(click.Option):
    """A click option whose environment twin is named after its long option name."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("show_envvar", True)
        super().__init__(*args, **kwargs)

    @property
    def long_name(self) -> str:
        longs = [o for o in self.opts if o.startswith("--")]
        return (longs[0] if longs else self.opts[0]).lstrip("-")

    def twin(self, ctx: click.Context) -> str | None:
        """The variable name in ``ctx`` (None outside an auto-prefixed command)."""
        if ctx.auto_envvar_prefix is None:
            return None
        return f"{ctx.auto_envvar_prefix}_{self.long_name.upper().replace('-', '_')}"

    def resolve_envvar_value(self, ctx: click.Context) -> str | None:
        name = self.twin(ctx)
        value = os.environ.get(name) if name else None
        return value or None  # an empty variable counts as unset, as in click

    def get_help_extra(self, ctx: click.Context) -> Any:
        extra = super().get_help_extra(ctx)
        name = self.twin(ctx)
        if name:
            extra["envvars"] = (name,)
        return extra


def option(*param_decls: str, **kwargs: Any) -> Callable[[F], F]:
    """``click.option`` with the environment twin of :class:`TwinOption`."""
    return click.option(*param_decls, cls=TwinOption, **kwargs)


def fixtures_dir_option(func: F) -> F:
    """``--fixtures-dir``: where fixture names are looked up (shared by run and fixtures)."""
    return option(
        "--fixtures-dir",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="Folder of your own fixtures, where names are looked up before the fixtures "
        "bundled with the harness [default: ./fixtures, when it holds a fixture].",
    )(func)


def iter_twins(group: click.Group) -> list[tuple[str, str, str]]:
    """(variable, command path, option) for every option of every command under ``group``."""
    rows: list[tuple[str, str, str]] = []

    def walk(cmd: click.Command, words: tuple[str, ...], prefix: str) -> None:
        if isinstance(cmd, click.Group):
            for name in sorted(cmd.commands):
                sub = cmd.commands[name]
                walk(sub, (*words, name), f"{prefix}_{name.upper().replace('-', '_')}")
            return
        for param in cmd.params:
            if isinstance(param, TwinOption):
                var = f"{prefix}_{param.long_name.upper().replace('-', '_')}"
                rows.append((var, " ".join(words), f"--{param.long_name}"))

    walk(group, (), ENV_PREFIX)
    return rows
