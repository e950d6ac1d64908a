"""Front-panel port names per switch OS, and back.

EOS names a 400G OSFP port ``Ethernet1/1``; SONiC names ports by their first
SerDes lane (``Ethernet0``, ``Ethernet8`` ... for 8-lane 400G ports); Cumulus
calls them ``swp1``.

How many lanes a SONiC port has is the SKU's (a 400G port is 8 lanes on
ACS-SN5600, 4 on the 2x400G Mellanox-SN5600-O128): callers pass ``width``
from :func:`fabgen.targets.sonic.sku.lanes_per_port`; without it the old rule
(8 lanes from 400G up, else 4) applies.
"""

from __future__ import annotations

import re
from functools import cache


@cache
def lanes_per_port(speed: int) -> int:
    return 8 if speed >= 400 else 4


@cache
def port_name(os: str, index: int, speed: int, width: int | None = None) -> str:
    if os == "eos":
        return f"Ethernet{index}/1"
    if os == "sonic":
        return f"Ethernet{(index - 1) * (width or lanes_per_port(speed))}"
    return f"swp{index}"


@cache
def port_lanes(os: str, index: int, speed: int, width: int | None = None) -> tuple[int, ...]:
    width = width or lanes_per_port(speed)
    first = (index - 1) * width
    return tuple(range(first, first + width))


_PARSERS = {
    "eos": re.compile(r"^Ethernet(\d+)(?:/1)?$"),
    "sonic": re.compile(r"^Ethernet(\d+)$"),
    "cumulus": re.compile(r"^swp(\d+)$"),
}


@cache
def port_index(os: str, name: str, speed: int, width: int | None = None) -> int:
    """1-based port number of ``name``, or 0 when it is not in the OS's naming scheme."""
    match = _PARSERS[os].match(name)
    if not match:
        return 0
    number = int(match.group(1))
    if os == "sonic":
        width = width or lanes_per_port(speed)
        return number // width + 1 if number % width == 0 else 0
    return number
