"""How EOS spells a plan's free text, MTU and orderings: the derivations the structured config
(:mod:`fabgen.targets.eos.config`) and the per-switch slot values (:mod:`fabgen.targets.eos.values`) share.

Why a module of their own: both paths must compute every value alike (the
filled-in text is only byte-identical to the rendered one if they do), so they
call these functions rather than two copies of them.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Sequence
from operator import attrgetter
from typing import TYPE_CHECKING

from fabgen.natural import natural_key
from fabgen.targets.eos.shape import IP
from fabgen.targets.eos.syntax import MAX_DESCRIPTION
from fabgen.targets.memo import remember_all

if TYPE_CHECKING:
    from fabgen.plan.model import BgpNeighbor

EOS_MAX_MTU = 9214
"""Largest IP MTU of an EOS routed interface."""
SAFE_TEXT = re.compile(r"[^A-Za-z0-9 ._,:/()@+=#-]")
"""Anything outside this set is replaced in free text (descriptions, comments)."""
_CLEAN_TEXT = re.compile(r"[A-Za-z0-9._,:/()@+=#-]+(?: [A-Za-z0-9._,:/()@+=#-]+)*")
"""Text :func:`config_text` would return unchanged (safe characters, single inner spaces)."""
_DOTTED_QUAD = re.compile(r"[0-9]+(?:\.[0-9]+){3}")
_QUAD_LINES = re.compile(rf"(?:{IP}\n)*{IP}")
"""Strict dotted quads (``shape.IP``), one a line."""
_PREFIX_LINES = re.compile(rf"(?:{IP}/3[12]\n)*{IP}/3[12]")
"""Strict dotted quads with ``/31`` or ``/32``, one a line."""
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


_SAFE_OR_BREAK = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 ._,:/()@+=#-\n"
"""The bytes of :data:`SAFE_TEXT`'s set, and the line break :func:`config_texts` joins with."""


def config_texts(values: list[str]) -> list[str]:
    """:func:`config_text` of each value: when none needs a change, the values themselves, told by a few
    C-level tests over all of them joined by line breaks instead of a call per value: only safe characters
    (one byte deletion), as many breaks as joins (so none in a value), no double space, and no break at
    either end, next to another or next to a space (an empty value, or a space at a value's end); and 1-240
    long. Anything else goes through :func:`config_text` one by one.

    Values all in :data:`TEXT_TOKENS` passed that test already, so they are returned at once: a switch's
    neighbour descriptions are its ports' own (a twentieth of the test's time for 64 of them)."""
    if values and TEXT_TOKENS.issuperset(values):
        return values
    joined = "\n".join(values)
    if (joined and joined.isascii() and not joined.encode().translate(None, _SAFE_OR_BREAK)
            and joined.count("\n") == len(values) - 1 and "  " not in joined
            and joined[0] not in " \n" and joined[-1] not in " \n"
            and "\n\n" not in joined and " \n" not in joined and "\n " not in joined
            and (len(joined) - len(values) < MAX_DESCRIPTION or max(map(len, values)) <= MAX_DESCRIPTION)):
        if "bfd" not in joined:
            remember_all(TEXT_TOKENS, values, _TOKENS_MOST)
        return values
    return list(map(config_text, values))


TEXT_TOKENS: set[str] = set()
"""Strings :func:`config_texts` found clean and without ``bfd``: each is a :data:`~fabgen.targets.eos.shape.TEXT`
token (1-240 safe characters, which hold no ``?``, no control character and no line break, and no space at
either end), so :mod:`fabgen.targets.eos.slots` needs no second look at a switch's descriptions. Kept by value
(an equal string is an equally good token), bounded."""
_TOKENS_MOST = 1 << 12
""":data:`TEXT_TOKENS` is emptied past this many strings (a switch adds its ports' descriptions, 64 or so)."""


_QUADS: set[str] = set()
"""Addresses :func:`quads` passed: a switch's neighbour addresses are sorted by :func:`by_address`, then
proved tokens by :mod:`fabgen.targets.eos.slots`. Kept by value (an equal string is an equally valid
address), bounded."""
_PREFIXES: set[str] = set()
"""Prefixes :func:`prefixes` passed: a leaf's networks are its port addresses, the same strings again."""
_PROVED_MOST = 1 << 14
"""Each proved set is emptied past this many strings: a fleet's switch adds a hundred or so, all its own."""


def _lines(tokens: Sequence[str], pattern: re.Pattern[str], proved: set[str]) -> bool:
    """Each token a line of ``pattern``: the tokens joined by line breaks, as many as joins (so none inside a
    token), fully matched by one C-level regex (about half the time of splitting the octets out and looking
    each up); the tokens ``proved`` holds passed already."""
    if not tokens:
        return False
    if proved.issuperset(tokens):
        return True
    joined = "\n".join(tokens)
    if joined.count("\n") != len(tokens) - 1 or not pattern.fullmatch(joined):
        return False
    remember_all(proved, tokens, _PROVED_MOST)
    return True


def quads(addresses: Sequence[str]) -> bool:
    """Each address a strict dotted quad (``shape.IP``): three dots, and every octet one of 0-255 without a
    leading zero."""
    return _lines(addresses, _QUAD_LINES, _QUADS)


def prefixes(tokens: Sequence[str]) -> bool:
    """Each token a strict dotted quad and ``/31`` or ``/32`` (``shape.IP`` and the ``/3[12]`` the address
    passes read after it)."""
    return _lines(tokens, _PREFIX_LINES, _PREFIXES)


def eos_mtu(mtu: int) -> int:
    """The IP MTU EOS is given for a plan MTU."""
    return min(mtu, EOS_MAX_MTU)


def by_address(neighbors: tuple[BgpNeighbor, ...]) -> list[BgpNeighbor]:
    """Sorted as :func:`natural_key` sorts the addresses (stable, as ``sorted`` is).

    For dotted quads (all of them, in practice) that is the order of their four
    numbers. When every one is strict (no leading zero, octets 0-255: :func:`quads`)
    ``inet_aton``'s four bytes are the key, which compare as the four numbers do;
    without a Python key function per neighbour.
    """
    addresses = list(map(_ADDRESS, neighbors))
    if neighbors and quads(addresses):
        keys = list(map(socket.inet_aton, addresses))
        if sorted(keys) == keys:  # the plan's port order often is address order: no permutation to apply
            return list(neighbors)
        return [neighbors[i] for i in sorted(range(len(neighbors)), key=keys.__getitem__)]
    if all(_DOTTED_QUAD.fullmatch(address) for address in addresses):
        return sorted(neighbors, key=lambda n: tuple(map(int, n.address.split("."))))
    return sorted(neighbors, key=lambda n: natural_key(n.address))
