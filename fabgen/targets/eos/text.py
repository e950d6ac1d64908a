"""How EOS spells a plan's free text, MTU and orderings: the derivations the structured config
(:mod:`fabgen.targets.eos.config`) and the per-switch slot values (:mod:`fabgen.targets.eos.values`) share.

Why a module of their own: both paths must compute every value alike (the
filled-in text is only byte-identical to the rendered one if they do), so they
call these functions rather than two copies of them.
"""

from __future__ import annotations

import re
import socket
from functools import lru_cache
from operator import attrgetter
from typing import TYPE_CHECKING

from fabgen.targets.eos.syntax import MAX_DESCRIPTION

if TYPE_CHECKING:
    from fabgen.plan.model import BgpNeighbor

EOS_MAX_MTU = 9214
"""Largest IP MTU of an EOS routed interface."""
SAFE_TEXT = re.compile(r"[^A-Za-z0-9 ._,:/()@+=#-]")
"""Anything outside this set is replaced in free text (descriptions, comments)."""
_CLEAN_TEXT = re.compile(r"[A-Za-z0-9._,:/()@+=#-]+(?: [A-Za-z0-9._,:/()@+=#-]+)*")
"""Text :func:`config_text` would return unchanged (safe characters, single inner spaces)."""
_DOTTED_QUAD = re.compile(r"[0-9]+(?:\.[0-9]+){3}")
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_STRICT_QUAD = rf"{_OCTET}\.{_OCTET}\.{_OCTET}\.{_OCTET}"
_STRICT_QUAD_LINES = re.compile(rf"{_STRICT_QUAD}(?:\n{_STRICT_QUAD})*")
"""Dotted quads without a leading zero or an octet above 255, one a line."""
_ADDRESS = attrgetter("address")


def config_text(value: str, limit: int = MAX_DESCRIPTION) -> str:
    """Free text safe on one EOS line: no line break, no '?' (CLI help), no control character.

    The spec already restricts names and descriptions; this is the second lock,
    so a template or plan change can never let a value start a new command.
    """
    if len(value) <= limit and _CLEAN_TEXT.fullmatch(value):  # most text: nothing to replace, one C-level match
        return value
    cleaned = SAFE_TEXT.sub("_", value)
    return " ".join(cleaned.split())[:limit].rstrip()


_CLEAN_LINES = re.compile(rf"(?:(?=[^\n]{{1,{MAX_DESCRIPTION}}}(?:\n|\Z)){_CLEAN_TEXT.pattern}(?:\n|\Z))+")
"""Lines each of which :func:`config_text` would return unchanged."""


def config_texts(values: list[str]) -> list[str]:
    """:func:`config_text` of each value: when none needs a change (one C-level match over all of them says
    so) the values themselves, without a call per value. A value holding a line break would split its line in
    two: the count of breaks rules that out."""
    joined = "\n".join(values)
    if values and joined.count("\n") == len(values) - 1 and _CLEAN_LINES.fullmatch(joined):
        return values
    return list(map(config_text, values))


def eos_mtu(mtu: int) -> int:
    """The IP MTU EOS is given for a plan MTU."""
    return min(mtu, EOS_MAX_MTU)


@lru_cache(maxsize=1 << 16)
def natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """``Ethernet2/1`` before ``Ethernet10/1``: numbers compare as numbers.

    Memoised: every switch of a tier has the same port names.
    """
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in re.findall(r"\d+|\D+", name))


def by_address(neighbors: tuple[BgpNeighbor, ...]) -> list[BgpNeighbor]:
    """Sorted as :func:`natural_key` sorts the addresses (stable, as ``sorted`` is).

    For dotted quads (all of them, in practice) that is the order of their four
    numbers. When every one is strict (no leading zero, octets 0-255), one
    C-level match says so and ``inet_aton``'s four bytes are the key, which
    compare as the four numbers do; without a Python key function per neighbour.
    """
    addresses = list(map(_ADDRESS, neighbors))
    if neighbors and _STRICT_QUAD_LINES.fullmatch("\n".join(addresses)):
        keys = list(map(socket.inet_aton, addresses))
        return [neighbors[i] for i in sorted(range(len(neighbors)), key=keys.__getitem__)]
    if all(_DOTTED_QUAD.fullmatch(address) for address in addresses):
        return sorted(neighbors, key=lambda n: tuple(map(int, n.address.split("."))))
    return sorted(neighbors, key=lambda n: natural_key(n.address))
