"""Read a host's ``roce-nic.conf`` back as ``roce-nic.sh`` reads it, for ``lint --deployed`` (FG507).

Why here: the script (``templates/mlx5/roce-nic.sh.j2``, ``read_plan``) is the
file's consumer, and a collected plan is compared by what the script would do
with it, not by its bytes. So the structure is the script's: comment and blank
lines skipped, every other line ``KEY=VALUE`` (no control character),
``FORMAT=`` first, each key once but ``NIC``, no key the script does not know,
every key it requires present; a value is split into words at blanks, as
``read -a`` splits it. A plan the script refuses raises ``ValueError`` (values
quoted, so ``lint`` can redact the ones the plan does not have).

What a value must look like is not checked here: a value other than the plan's
is drift whatever it is, and the rule says so (the script's own patterns would
only decide whether the host refuses it or applies it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SETTINGS = ("HOST", "TRUST", "DSCP_PRIO", "PFC_EN", "PRIO_TC", "TC_TSA", "TC_BW", "DCBX_OS", "PAUSE_OFF", "DCQCN",
            "ECN_ENABLE", "CC", "CMA_ROCE_MODE", "CMA_ROCE_TOS", "TRAFFIC_CLASS")
"""The keys ``read_plan`` requires once each, in the order fabgen writes them (``NIC`` comes after, once per NIC)."""
NIC_FIELDS = ("interface", "PCI address", "RDMA port", "rail", "MTU")
"""The words of a ``NIC=`` line after its RDMA device, as the script names them."""

_LINE = re.compile(r"([A-Z][A-Z_]*)=([^\x00-\x1f\x7f]*)")
"""``read_plan``'s ``^([A-Z][A-Z_]*)=([^[:cntrl:]]*)$``."""


@dataclass(frozen=True)
class NicPlan:
    """A plan file as the script takes it: each setting's words, each NIC's words, and the lines they stand on."""

    format: str
    settings: dict[str, tuple[str, ...]]
    nics: dict[str, tuple[str, ...]]
    """RDMA device -> the other words of its ``NIC=`` line (:data:`NIC_FIELDS`), in file order."""
    lines: dict[str, int]
    """Setting (``FORMAT``, ``TRUST``...) or ``NIC mlx5_0`` -> its line."""


def parse_nic_plan(text: str) -> NicPlan:
    """The plan in ``text``; ValueError where ``roce-nic.sh`` would refuse it."""
    fmt: str | None = None
    settings: dict[str, tuple[str, ...]] = {}
    nics: dict[str, tuple[str, ...]] = {}
    lines: dict[str, int] = {}
    for number, line in enumerate(text.split("\n"), 1):
        if not line or line.startswith("#"):
            continue
        match = _LINE.fullmatch(line)
        if match is None:
            raise ValueError(f"line {number} is not a KEY=VALUE line")
        key, value = match.groups()
        if fmt is None:
            if key != "FORMAT":
                raise ValueError(f"line {number}: the first setting must be FORMAT=, not {key!r}")
            fmt, lines["FORMAT"] = value, number
            continue
        words = tuple(value.split())
        if key == "NIC":
            if not words:
                raise ValueError(f"line {number}: NIC= names no device")
            if words[0] in nics:
                raise ValueError(f"line {number}: NIC {words[0]!r} given twice")
            nics[words[0]], lines[f"NIC {words[0]}"] = words[1:], number
        elif key not in SETTINGS:
            raise ValueError(f"line {number}: unknown key {key!r}")
        elif key in settings or key == "FORMAT":
            raise ValueError(f"line {number}: {key} given twice")
        else:
            settings[key], lines[key] = words, number
    if fmt is None:
        raise ValueError("no FORMAT= line: not a roce-nic.sh plan")
    missing = [key for key in SETTINGS if key not in settings] + (["NIC"] if not nics else [])
    if missing:
        raise ValueError(f"{missing[0]} is missing")
    return NicPlan(fmt, settings, nics, lines)
