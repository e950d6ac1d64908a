"""Hand-set NCCL variables, checked while the spec is validated.

NCCL never complains about a variable it does not know or a value it misreads:
``NCCL_IB_HCAS`` is ignored, ``NCCL_IB_TC=0106`` is octal 70 and lands in the
wrong traffic class, ``NCCL_IB_RETRY_CNT=8`` overflows a 3-bit field. Such a spec
must not produce files, so every *error* of
:func:`fabgen.targets.nccl.variables.check_nccl_var` becomes a located problem at the
variable's key (``spec.yaml:88:5: ...``). Warnings (a variable that works but is
probably not what was meant) are left to the linter.

YAML adds a trap of its own: an unquoted ``0106`` is the integer 106 to YAML 1.2
but octal 70 to NCCL, so the same text means two things depending on where it
is copied. The raw token is read from the source to catch it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from fabgen.errors import Problem
from fabgen.source import DataPath, SourceDoc
from fabgen.spec.cluster import ClusterSpec
from fabgen.targets.nccl.variables import check_nccl_var, nccl_strtoll

_LEADING_ZERO = re.compile(r"[+-]?0[0-9][0-9_]*")
"""An unquoted YAML integer written with a leading zero (``0106``), not ``0``/``0x..``/``0o..``."""


def check_nccl_env(spec: ClusterSpec, doc: SourceDoc) -> list[Problem]:
    """Errors in ``nccl.env`` and every host override's ``nccl_env``, located at the key."""
    version = spec.nccl.version
    problems = _check_env(spec.nccl.env, ("nccl", "env"), version, doc)
    for gindex, group in enumerate(spec.hosts):
        for host, override in group.overrides.items():
            path: DataPath = ("hosts", gindex, "overrides", host, "nccl_env")
            problems += _check_env(override.nccl_env, path, version, doc)
    return problems


def _check_env(env: Mapping[str, bool | int | str], path: DataPath, version: str,
               doc: SourceDoc) -> list[Problem]:
    problems: list[Problem] = []
    for name, value in env.items():
        where = (*path, name)
        messages = []
        octal = _yaml_leading_zero(doc, where, value)
        if octal is not None:
            messages.append(octal)
        messages += [_text(issue.message, issue.hint)
                     for issue in check_nccl_var(name, value, version) if issue.severity == "error"]
        problems += [doc.problem(message, where, key=True) for message in messages]
    return problems


def _text(message: str, hint: str | None) -> str:
    return f"{message}; {hint}" if hint else message


def _yaml_leading_zero(doc: SourceDoc, path: DataPath, value: object) -> str | None:
    """A message when YAML read an unquoted leading-zero number that NCCL would read as octal."""
    if isinstance(value, bool) or not isinstance(value, int) or path not in doc.value_positions:
        return None
    line, col = doc.value_positions[path]
    lines = doc.text.splitlines()
    if not 0 < line <= len(lines):
        return None
    match = _LEADING_ZERO.match(lines[line - 1], col - 1)
    if match is None:
        return None
    token = match.group()
    digits = token.replace("_", "")
    nccl_reads = nccl_strtoll(digits).value
    if set(digits.lstrip("+-")) <= set("01234567"):
        return (f"{path[-1]}: {token} has a leading zero: YAML reads it as {value}, but NCCL reads the same text "
                f"as octal {nccl_reads}; write {value} without the zero (or {nccl_reads} if octal was meant)")
    return (f"{path[-1]}: {token} has a leading zero: YAML reads it as {value}, but NCCL reads the same text "
            f"as {nccl_reads} (octal stops at the first 8 or 9); write {value} without the zero")


__all__ = ["check_nccl_env"]
