"""Base model and the restricted string types every spec model uses.

Names end up in file paths, switch config lines, XML attributes and shell
scripts. They are restricted here, once, so that no value can carry a newline,
a quote, a comment character or a path separator into any output.

The model modules of this package do without ``from __future__ import
annotations``: with it every field's annotation is a string that pydantic
compiles and evaluates when it builds the model (some 170 of them, 30 to 40 ms
of every ``fabgen`` start); written plainly, Python evaluates each once as the
class body runs. A method returning its own class says ``Self``.
tests/spec/test_model_annotations.py keeps it so.
"""

import re
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, StringConstraints

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$"
Name = Annotated[str, StringConstraints(pattern=NAME_PATTERN)]
"""Device, profile, group and class names: safe as a file name and a config token."""

DESCRIPTION_PATTERN = r"^[A-Za-z0-9 ._,:/()@+=-]{0,200}$"
Description = Annotated[str, StringConstraints(pattern=DESCRIPTION_PATTERN)]
"""Free text that stays on one line in every config language we emit."""

Netdev = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,14}$")]
"""A Linux network interface name (at most 15 characters, IFNAMSIZ - 1)."""

RdmaDevice = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_]{0,62}$")]
"""An RDMA device name as ``ibv_devices`` prints it (``mlx5_0``, ``mlx5_bond_0``)."""

BusId = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")]
"""A PCI address exactly as NCCL prints it: ``0000:17:00.0``, lower-case, 4-digit domain."""

Token = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")]
"""A model or ASIC name: a single config token."""

MAX_CPU_ID = 8191
"""Highest logical CPU id (the kernel's largest ``NR_CPUS``): a cpulist beyond it names CPUs no machine has,
and expanding ``0-4294967295`` would take minutes and gigabytes."""


def _check_cpulist(value: str) -> str:
    """Refuse what the planner's ``parse_cpulist`` would refuse (or choke on), here, at the field."""
    for part in value.split(","):
        low, _, high = part.partition("-")
        first, last = int(low), int(high or low)
        if last < first:
            raise ValueError(f"CPU range {part} runs backwards; write {last}-{first}")
        if last > MAX_CPU_ID:
            raise ValueError(f"CPU {last} is beyond the highest CPU id Linux supports ({MAX_CPU_ID})")
    return value


CpuList = Annotated[str, StringConstraints(pattern=r"^[0-9]{1,5}(-[0-9]{1,5})?(,[0-9]{1,5}(-[0-9]{1,5})?)*$"),
                    AfterValidator(_check_cpulist)]
"""A Linux cpulist, as in ``/sys/devices/system/node/node0/cpulist``: ``0-55,112-167``."""

PATTERN_FIELD = re.compile(r"\{(\w+)(?::(0?[0-9]{1,2})d)?\}", re.ASCII)


class SpecModel(BaseModel):
    """Frozen, strict about unknown keys: a typo is an error, not a silent default."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=False, validate_default=True)


def expand_pattern(pattern: str, **fields: int) -> str:
    """Fill ``{index:05d}``-style fields without ``str.format`` (which could reach attributes)."""

    def fill(match: re.Match[str]) -> str:
        value = fields[match.group(1)]
        width = match.group(2)
        return str(value).zfill(int(width)) if width else str(value)

    return PATTERN_FIELD.sub(fill, pattern)


def pattern_fields(pattern: str) -> set[str]:
    return {m.group(1) for m in PATTERN_FIELD.finditer(pattern)}
