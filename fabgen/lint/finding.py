"""What the linter reports: one :class:`Finding` type that every output format reads.

A rule yields :class:`Hit` objects (what it saw and where); the engine turns
each into a :class:`Finding` by adding the rule's code, slug and configured
severity. Rules therefore never decide their own severity: the operator does,
through ``[tool.fabgen.lint]`` or ``.fabgen.yaml``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning")


@dataclass(frozen=True, slots=True, order=True)
class Location:
    """A place in a file: the spec, an LLDP capture, a cabling CSV, a deployed config.

    ``line``/``col`` are 1-based; 0 means unknown. ``path`` is the spec data path
    (``qos.classes.roce.dscp``) when the place is in the spec. ``note`` says what
    a related location is ("planned here", "reported by lab01").
    """

    file: str
    line: int = 0
    col: int = 0
    path: str = ""
    note: str = ""

    def __str__(self) -> str:
        if not self.line:
            return self.file
        return f"{self.file}:{self.line}:{self.col or 1}"


@dataclass(frozen=True, slots=True)
class Hit:
    """One problem as a rule sees it, before the engine adds code and severity."""

    message: str
    location: Location
    hint: str | None = None
    related: tuple[Location, ...] = ()


@dataclass(frozen=True, slots=True)
class Finding:
    """One located lint finding.

    ``code`` (``FG101``) and ``slug`` (``roce-dscp-not-lossless``) name the rule;
    ``severity`` is the configured one; ``location`` is where to look first and
    ``related`` the other places involved (the other end of a swapped cable, the
    switch override that changed a map). ``hint`` says how to fix it.
    """

    code: str
    slug: str
    severity: Severity
    message: str
    location: Location
    hint: str | None = None
    related: tuple[Location, ...] = ()

    @property
    def file(self) -> str:
        return self.location.file

    @property
    def line(self) -> int:
        return self.location.line

    @property
    def col(self) -> int:
        return self.location.col

    @property
    def path(self) -> str:
        """Spec data path of the primary location ('' outside the spec)."""
        return self.location.path

    def sort_key(self) -> tuple[object, ...]:
        """Most severe first, then by place, then by rule: the order of every output."""
        loc = self.location
        return (SEVERITIES.index(self.severity), loc.file, loc.line, loc.col, self.code, self.message)

    def __str__(self) -> str:
        return f"{self.location}: [{self.severity}] {self.message} ({self.code})"
