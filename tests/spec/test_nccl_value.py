"""The NCCL value check in Python (``fabgen.spec.nccl._one_line``) answers as pydantic's own pattern check would.

The reference is the declaration it replaced, ``StringConstraints(pattern=VALUE_PATTERN)``
in the same union, validated by pydantic-core's regex engine: every planted value must be
accepted by both or refused by both with the same errors (type, message, context), at the
same place once fabgen drops pydantic's union tags (``fabgen.spec.validate._data_path``).
"""

from __future__ import annotations

import random
from typing import Annotated, Any

import pytest
from pydantic import StringConstraints, TypeAdapter, ValidationError

from fabgen.spec.nccl import VALUE_PATTERN, NcclEnv, NcclName

_REFERENCE: TypeAdapter[Any] = TypeAdapter(
    dict[NcclName, bool | int | Annotated[str, StringConstraints(pattern=VALUE_PATTERN)]])
_OURS: TypeAdapter[Any] = TypeAdapter(NcclEnv)

_PLANTED = [
    "", "ok", "eth0,eth1", "^=mlx5_0:1", " leading and trailing ", "x" * 1023, "x" * 1024, "é" * 1023, "é" * 1024,
    "\U0001f600" * 1023, "\U0001f600" * 1024, "a\nb", "a\rb", "\t", "\x00", "\x1f", "\x7f", "\x80", "\u2028", "\u2029",
    "\u2027", "\u202a", "line\n", "\ud800", "a\udfffb", "\ud83d\ude00", "\ufeff", "1", "0106", "true", "True", "-1",
]


def _errors(adapter: TypeAdapter[Any], value: object) -> object:
    try:
        return ("ok", adapter.validate_python({"NCCL_X": value}))
    except ValidationError as exc:
        return [(e["type"], e["loc"][0], e["msg"], e.get("ctx"))
                for e in exc.errors(include_url=False, include_context=True, include_input=False)]


def _fuzz() -> list[str]:
    rng = random.Random(17)
    alphabet = ["a", "Z", "0", " ", "=", "\x00", "\n", "\x1f", "\x7f", "\x80", "\u2028", "\u2029", "é", "\U0001f600",
                "\ud800"]
    values = []
    for _ in range(400):
        length = rng.choice([0, 1, 2, 5, 1022, 1023, 1024, 1030])
        body = [rng.choice(alphabet[:5]) for _ in range(length)]
        for _ in range(rng.choice([0, 0, 1, 2])):
            if body:
                body[rng.randrange(len(body))] = rng.choice(alphabet)
        values.append("".join(body))
    return values


@pytest.mark.parametrize("value", _PLANTED + _fuzz(), ids=range(len(_PLANTED) + 400))
def test_the_python_check_answers_as_the_pattern_does(value: str) -> None:
    assert _errors(_OURS, value) == _errors(_REFERENCE, value)


def test_the_planted_values_cover_every_outcome() -> None:
    """Accepted, refused by the pattern (a control character, too long), not a string at all (a lone surrogate)."""
    kinds = set()
    for value in _PLANTED:
        found = _errors(_REFERENCE, value)
        kinds.add("ok" if found[0] == "ok" else found[-1][0])  # type: ignore[index]
    assert kinds == {"ok", "string_pattern_mismatch", "string_unicode"}
