"""Which rules run, at which severity: ``[tool.fabgen.lint]`` in pyproject.toml or ``lint:`` in .fabgen.yaml.

::

    # pyproject.toml                       # .fabgen.yaml
    [tool.fabgen.lint]                     lint:
    select = ["FG1", "FG2"]                  select: [FG1, FG2]
    ignore = ["FG208"]                       ignore: [hca-rail-order]
    strict = false                           severity: {FG206: error, FG404: "off"}
    [tool.fabgen.lint.severity]
    FG206 = "error"

Selectors are ``ALL``, a rule code (``FG101``), a code prefix (``FG1``, ``FG25``)
or a slug (``roce-dscp-not-lossless``). A rule runs when a ``select`` entry
matches it and no ``ignore`` entry does. ``severity`` sets ``error``,
``warning`` or ``off`` per rule. The file is looked for from the spec's
directory upwards, stopping at the repository root (a directory with ``.git``);
``.fabgen.yaml`` wins over ``pyproject.toml`` in the same directory.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from fabgen.bounded import read_text
from fabgen.errors import FabgenError, Problem
from fabgen.lint.finding import SEVERITIES, Severity
from fabgen.lint.registry import RULES, Rule, get_rule, suggest

CONFIG_NAMES = (".fabgen.yaml", ".fabgen.yml")
KEYS = ("select", "ignore", "severity", "strict")
LEVELS = (*SEVERITIES, "off")


@dataclass(frozen=True)
class LintConfig:
    """Rule selection and severities. The default runs every rule at its default severity."""

    select: tuple[str, ...] = ("ALL",)
    ignore: tuple[str, ...] = ()
    severity: Mapping[str, str] = field(default_factory=dict)
    """Rule code -> ``error`` / ``warning`` / ``off``."""
    strict: bool = False
    """Warnings fail the run too (exit 1)."""
    source: str | None = None
    """File the configuration came from, for messages."""

    def __post_init__(self) -> None:
        problems = []
        for selector in (*self.select, *self.ignore):
            if not _matching(selector):
                problems.append(_unknown(selector, self.source))
        normal: dict[str, str] = {}
        for name, level in self.severity.items():
            rule = get_rule(name)
            if rule is None:
                problems.append(_unknown(name, self.source))
            elif level not in LEVELS:
                problems.append(Problem(f"severity of {name} must be one of {', '.join(LEVELS)}, not {level!r}",
                                        file=self.source or "fabgen"))
            else:
                normal[rule.code] = level
        if problems:
            raise FabgenError(problems)
        object.__setattr__(self, "severity", normal)

    def enabled(self, rule: Rule) -> bool:
        return any(_selects(s, rule) for s in self.select) and not any(_selects(s, rule) for s in self.ignore)

    def severity_of(self, rule: Rule) -> Severity | None:
        """The severity ``rule`` reports at, or None when it does not run."""
        level = self.severity.get(rule.code)
        if level == "off" or not self.enabled(rule):
            return None
        return level if level in SEVERITIES else rule.severity

    def override(self, select: Iterable[str] | None = None, ignore: Iterable[str] | None = None,
                 strict: bool | None = None) -> LintConfig:
        """Command-line options on top: ``select`` replaces, ``ignore`` adds, ``strict`` turns on."""
        return replace(
            self,
            select=tuple(select) if select else self.select,
            ignore=(*self.ignore, *(ignore or ())),
            strict=self.strict or bool(strict),
        )


def _selects(selector: str, rule: Rule) -> bool:
    text = selector.strip()
    if text.upper() == "ALL":
        return True
    if text.lower() == rule.slug:
        return True
    return rule.code.startswith(text.upper()) and text.upper().startswith("FG")


def _matching(selector: str) -> list[Rule]:
    return [rule for rule in RULES if _selects(selector, rule)]


def _unknown(name: str, source: str | None) -> Problem:
    guess = suggest(name)
    hint = f"; did you mean {guess}?" if guess else " (see `fabgen rules`)"
    return Problem(f"unknown rule or selector {name!r}{hint}", file=source or "fabgen")


def _strings(value: Any, key: str, file: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise FabgenError([Problem(f"lint.{key} must be a list of rule codes, prefixes or slugs", file=file)])
    return tuple(value)


def config_from_mapping(data: Any, file: str) -> LintConfig:
    """Validate the ``lint`` table/mapping of a configuration file."""
    if data is None:
        return LintConfig(source=file)
    if not isinstance(data, dict):
        raise FabgenError([Problem("the lint configuration must be a mapping (select, ignore, severity, strict)",
                                   file=file)])
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise FabgenError([Problem(f"unknown lint setting {unknown[0]!r} (known: {', '.join(KEYS)})", file=file)])
    severity = data.get("severity", {})
    if not isinstance(severity, dict) or not all(isinstance(v, str) for v in severity.values()):
        raise FabgenError([Problem("lint.severity maps rule codes to error, warning or off", file=file)])
    strict = data.get("strict", False)
    if not isinstance(strict, bool):
        raise FabgenError([Problem("lint.strict must be true or false", file=file)])
    return LintConfig(
        select=_strings(data.get("select", ["ALL"]), "select", file),
        ignore=_strings(data.get("ignore", []), "ignore", file),
        severity={str(k): v for k, v in severity.items()},
        strict=strict,
        source=file,
    )


MAX_CONFIG_BYTES = 1024 * 1024
"""Largest lint configuration read (a ``pyproject.toml`` is a few kB)."""


def load_config(path: Path | str) -> LintConfig:
    """Read a ``.fabgen.yaml`` (its ``lint`` key) or a ``pyproject.toml`` (``[tool.fabgen.lint]``)."""
    path = Path(path)
    file = str(path)
    if path.name == "pyproject.toml" or path.suffix == ".toml":
        try:  # a regular file of at most 1 MiB (a FIFO named pyproject.toml must not hang CI)
            data = tomllib.loads(read_text(path, MAX_CONFIG_BYTES, what="configuration file"))
        except tomllib.TOMLDecodeError as exc:
            raise FabgenError([Problem(f"invalid TOML: {exc}", file=file)]) from None
        return config_from_mapping(data.get("tool", {}).get("fabgen", {}).get("lint"), file)
    from fabgen.source import load_source

    doc = load_source(path)
    return config_from_mapping(doc.data.get("lint"), file)


def _has_lint_table(path: Path) -> bool:
    try:
        data = tomllib.loads(read_text(path, MAX_CONFIG_BYTES, what="configuration file"))
    except (FabgenError, tomllib.TOMLDecodeError):
        return False
    return isinstance(data.get("tool", {}).get("fabgen", {}).get("lint"), dict)


def find_config(start: Path | str) -> Path | None:
    """The configuration that applies to files in ``start`` (a directory or a file in it)."""
    here = Path(start).resolve()
    if not here.is_dir():
        here = here.parent
    for directory in (here, *here.parents):
        for name in CONFIG_NAMES:
            candidate = directory / name
            if candidate.is_file():
                return candidate
        pyproject = directory / "pyproject.toml"
        if pyproject.is_file() and _has_lint_table(pyproject):
            return pyproject
        if (directory / ".git").exists():
            return None
    return None


def config_for(spec_path: Path | str) -> LintConfig:
    """The configuration found for a spec file, or the default one."""
    found = find_config(spec_path)
    return load_config(found) if found is not None else LintConfig()
