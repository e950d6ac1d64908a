"""Parse the units an operator writes: ``400G``, ``150KB``, ``200ms``, ``5m``.

Parsed once, at validation; everything after works in plain integers:
link speeds in Gb/s, sizes in bytes, durations in milliseconds, lengths in metres.
Sizes are binary (``KB`` = 1024 bytes), as switch vendors size buffers.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Annotated

from pydantic import BeforeValidator, WithJsonSchema

_NUMBER_UNIT = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*$", re.ASCII)
"""ASCII digits only: ``\\d`` also matches ``٤٠٠``, which no switch or NIC tool reads."""

_SPEED_GBPS = {"g": 1, "gb": 1, "gbps": 1, "t": 1000, "tb": 1000, "tbps": 1000}
_SIZE_BYTES = {
    "": 1, "b": 1,
    "k": 1024, "kb": 1024, "kib": 1024,
    "m": 1024**2, "mb": 1024**2, "mib": 1024**2,
}
_DURATION_MS = {"ms": 1, "s": 1000}
_LENGTH_M = {"": 1, "m": 1, "km": 1000}
MAX_AMOUNT = 2**53
"""Largest value of any unit (Gb/s, bytes, ms, m): far above real hardware, and exact as a float."""


def _parse(value: object, table: dict[str, int], what: str, example: str, minimum: int = 0) -> int:
    if isinstance(value, bool):
        raise ValueError(f"expected a {what} like {example!r}, got a boolean")
    if isinstance(value, int):
        if "" not in table:
            raise ValueError(f"{what} needs a unit, e.g. {example!r}")
        amount = value
    elif not isinstance(value, str):
        raise ValueError(f"expected a {what} like {example!r}")
    else:
        match = _NUMBER_UNIT.match(value)
        unit = match.group(2).lower() if match else None
        if match is not None and unit == "" and "" not in table:
            raise ValueError(f"{what} {value[:40]!r} needs a unit, e.g. {example!r}")
        if match is None or unit not in table:
            units = ", ".join(sorted(u for u in table if u))
            raise ValueError(f"cannot read {value[:40]!r} as a {what} (units: {units}; e.g. {example!r})")
        if len(match.group(1)) > 30:  # exact arithmetic below; a float would overflow to inf
            raise ValueError(f"{what} is too large (at most {MAX_AMOUNT})")
        exact = Fraction(match.group(1)) * table[unit]
        if exact.denominator != 1:
            raise ValueError(f"{value[:40]!r} is not a whole number of {what} base units")
        amount = int(exact)
    if amount < minimum:
        raise ValueError(f"a {what} must be at least {minimum}")
    if amount > MAX_AMOUNT:
        raise ValueError(f"{what} is too large (at most {MAX_AMOUNT})")
    return amount


def parse_speed(value: object) -> int:
    """Link speed in Gb/s: ``400G`` -> 400."""
    return _parse(value, _SPEED_GBPS, "link speed", "400G", minimum=1)


def parse_size(value: object) -> int:
    """Buffer size in bytes: ``150KB`` -> 153600."""
    return _parse(value, _SIZE_BYTES, "size", "150KB")


def parse_duration(value: object) -> int:
    """Duration in milliseconds: ``200ms`` -> 200, ``1s`` -> 1000."""
    return _parse(value, _DURATION_MS, "duration", "200ms")


def parse_length(value: object) -> int:
    """Cable length in metres: ``5m`` -> 5."""
    return _parse(value, _LENGTH_M, "length", "5m")


def _schema(pattern: str, example: str, *, bare: bool = True) -> WithJsonSchema:
    """``bare``: a plain integer is allowed too (sizes in bytes, lengths in metres; not speeds or durations)."""
    text = {"type": "string", "pattern": pattern}
    if not bare:
        return WithJsonSchema({**text, "examples": [example]})
    return WithJsonSchema({"anyOf": [{"type": "integer", "minimum": 0}, text], "examples": [example]})


Speed = Annotated[int, BeforeValidator(parse_speed),
                  _schema(r"^[0-9]+(\.[0-9]+)?\s*[GgTt](b|bps)?$", "400G", bare=False)]
"""Gb/s, written ``400G`` in the spec."""
Size = Annotated[int, BeforeValidator(parse_size), _schema(r"^[0-9]+(\.[0-9]+)?\s*([KkMm]i?[Bb]?|[Bb])?$", "150KB")]
"""Bytes, written ``150KB`` in the spec."""
Duration = Annotated[int, BeforeValidator(parse_duration), _schema(r"^[0-9]+(\.[0-9]+)?\s*(ms|s)$", "200ms", bare=False)]
"""Milliseconds, written ``200ms`` in the spec."""
Length = Annotated[int, BeforeValidator(parse_length), _schema(r"^[0-9]+(\.[0-9]+)?\s*(m|km)?$", "5m")]
"""Metres, written ``5m`` in the spec."""
