"""Translating library errors to one clear line and the documented exit code."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from harness.errors import EXIT_INFRA, HarnessError, is_storage_error, storage_cause

F = TypeVar("F", bound=Callable[..., Any])


def translate_errors(func: F) -> F:
    """Expected failures print one line on stderr (no traceback) and exit with their code."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except HarnessError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(exc.exit_code)
        except OSError as exc:
            if not is_storage_error(exc):
                raise
            click.echo(f"error: {storage_cause(exc)}", err=True)
            sys.exit(EXIT_INFRA)

    return wrapper  # type: ignore[return-value]
