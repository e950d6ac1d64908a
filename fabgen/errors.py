"""Error types shared by every stage.

Every user-facing failure is a :class:`FabgenError`; the CLI prints its lines and
exits 2, so no traceback ever reaches an operator for bad input. A
:class:`Problem` carries a position so messages read ``spec.yaml:42:7: ...``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
MAX_MESSAGE = 600
"""Longest message (and data path) printed; longer ones, which only echo hostile input, are cut."""


def printable(text: str, limit: int = MAX_MESSAGE) -> str:
    """``text`` as one line safe for a terminal or CI log: control characters escaped, length capped."""
    text = _UNPRINTABLE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass(frozen=True, slots=True)
class Problem:
    """One located problem: ``file:line:col: message (at data.path)``.

    ``line`` and ``col`` are 1-based; 0 means unknown. The printed form is always
    one printable line, whatever the input smuggled into the message or path.
    """

    message: str
    file: str = "<spec>"
    line: int = 0
    col: int = 0
    path: str = ""

    def __str__(self) -> str:
        where = printable(self.file, 4096)
        if self.line:
            where += f":{self.line}:{self.col or 1}"
        text = f"{where}: {printable(self.message)}"
        if self.path:
            text += f" (at {printable(self.path, 200)})"
        return text


class FabgenError(Exception):
    """Base class for errors caused by input, not by a bug in fabgen."""

    def __init__(self, problems: list[Problem] | str) -> None:
        if isinstance(problems, str):
            problems = [Problem(problems, file="fabgen")]
        self.problems: list[Problem] = problems
        super().__init__("\n".join(str(p) for p in problems))

    def lines(self) -> list[str]:
        """One line per problem, ready to print."""
        return [str(p) for p in self.problems]


class SpecError(FabgenError):
    """The spec could not be loaded, validated or planned."""


class OutputError(FabgenError):
    """The output directory cannot be written safely, or a render failed its check."""
