"""Front-panel port names per switch OS, and back.

EOS names a 400G OSFP port ``Ethernet1/1``; SONiC names ports by their first
SerDes lane (``Ethernet0``, ``Ethernet8`` ... for 8-lane 400G ports); Cumulus
calls them ``swp1``.

A chassis's own scheme (slot/port/lane on a modular EOS chassis, a lane per
half of a broken-out 800G cage) comes from the model table
(:mod:`fabgen.platforms`): the ``model_port_*`` functions below use it and
fall back to the plain per-OS names.

How many lanes a SONiC port has is the SKU's (a 400G port is 8 lanes on
ACS-SN5600, 4 on the 2x400G Mellanox-SN5600-O128): callers pass ``width``
from :func:`fabgen.targets.sonic.sku.lanes_per_port`; without it the old rule
(8 lanes from 400G up, else 4) applies.
"""

from __future__ import annotations

import re
from functools import cache

from fabgen.platforms import Platform, platform


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


def _named(os: str, model: str, speed: int) -> Platform | None:
    """The platform whose naming applies: EOS only (SONiC and Cumulus name ports by lane or ``swp``)."""
    if os != "eos":
        return None
    found = platform(model)
    if found is None or not found.cages or (not found.modular and found.breakout(speed) == 1):
        return None  # the OS's plain scheme is already right
    return found


@cache
def model_port_name(os: str, model: str, index: int, speed: int, width: int | None = None) -> str:
    """The name of front-panel port ``index`` (1-based, counted at ``speed``) on ``model``.

    ``width``: lanes per port where a SONiC SKU fixes it (SONiC names ports by their first lane).
    """
    found = _named(os, model, speed)
    if found is None:
        return port_name(os, index, speed, width)
    per_cage = found.breakout(speed)
    cage, sub = divmod(index - 1, per_cage)
    lane = 1 + sub * (found.lanes // per_cage)
    if found.modular:
        slot, port = divmod(cage, found.cages)
        return f"Ethernet{found.first_slot + slot}/{port + 1}/{lane}"
    return f"Ethernet{cage + 1}/{lane}"


_EOS_NAME = re.compile(r"^Ethernet(\d+)/(\d+)(?:/(\d+))?$")


@cache
def model_port_index(os: str, model: str, name: str, speed: int, width: int | None = None) -> int:
    """1-based port number of ``name`` on ``model``, or 0 when it is not in the model's scheme."""
    found = _named(os, model, speed)
    if found is None:
        return port_index(os, name, speed, width)
    match = _EOS_NAME.match(name)
    if not match:
        return 0
    per_cage = found.breakout(speed)
    step = found.lanes // per_cage
    if found.modular:
        if match.group(3) is None:
            return 0
        slot, port, lane = int(match.group(1)) - found.first_slot, int(match.group(2)), int(match.group(3))
        if not 0 <= slot < found.slots or not 1 <= port <= found.cages:
            return 0
        cage = slot * found.cages + port - 1
    else:
        if match.group(3) is not None:
            return 0
        cage, lane = int(match.group(1)) - 1, int(match.group(2))
    if (lane - 1) % step or not 1 <= lane <= found.lanes:
        return 0
    return cage * per_cage + (lane - 1) // step + 1


@cache
def model_port_lanes(os: str, model: str, index: int, speed: int, width: int | None = None) -> tuple[int, ...]:
    """SerDes lanes of port ``index``: a breakout half of an 800G cage has 4 of the cage's 8, not 8."""
    found = _named(os, model, speed)
    if found is None or found.breakout(speed) == 1:
        return port_lanes(os, index, speed, width)
    width = found.lanes // found.breakout(speed)
    return tuple(range((index - 1) * width, index * width))
