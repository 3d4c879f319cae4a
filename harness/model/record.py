"""The one ``to_dict``/``from_dict`` pair every record of the report model shares.

Records are frozen dataclasses; their JSON form is produced and checked by the scorer's
typed codec (:mod:`scorers.codec`), so a record read back is the record written, or the
read fails naming the first field that does not fit.
"""

from __future__ import annotations

from typing import Any, Self, cast

#: A 95% interval as ``(low, high)``; ``None`` where the data cannot define one.
Interval = tuple[float, float]


class Record:
    """Mixin for frozen dataclasses of the report model."""

    # The codec is imported on first use: the CLI reads the model's constants (defaults,
    # verdict names) at start-up, and the scorer package behind the codec is not cheap.

    def to_dict(self) -> dict[str, Any]:
        from scorers.codec import encode

        return cast(dict[str, Any], encode(self))

    @classmethod
    def from_dict(cls, data: object, where: str | None = None) -> Self:
        """The record ``data`` holds; ``ValueError`` naming the field that does not fit."""
        from scorers.codec import decode

        return decode(cls, data, where or cls.__name__)
