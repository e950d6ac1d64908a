"""Error types shared by every stage.

Every user-facing failure is a :class:`FabgenError`; the CLI prints its lines and
exits 2, so no traceback ever reaches an operator for bad input. A
:class:`Problem` carries a position so messages read ``spec.yaml:42:7: ...``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Problem:
    """One located problem: ``file:line:col: message (at data.path)``.

    ``line`` and ``col`` are 1-based; 0 means unknown.
    """

    message: str
    file: str = "<spec>"
    line: int = 0
    col: int = 0
    path: str = ""

    def __str__(self) -> str:
        where = self.file
        if self.line:
            where += f":{self.line}:{self.col or 1}"
        text = f"{where}: {self.message}"
        if self.path:
            text += f" (at {self.path})"
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
