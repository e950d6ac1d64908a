"""Linux names for a twin: a prefix, one namespace per device, one interface name per port.

Namespace names may be long, but interface names may not: Linux takes at most
15 bytes (IFNAMSIZ - 1) and refuses ``/``, ``:`` and white space, while EOS
calls a port ``Ethernet17/1``. So every port gets a Linux name by a fixed rule
(kept when already valid, ``/`` turned into ``-`` when that fits, else a short
hash), and namespaces are numbered under the prefix rather than named after
devices. The maps are part of the state and of the JSON report, so an operator
can go from ``fg-3fa2c1-7 e17-1`` back to ``leaf-r0-p00-01 Ethernet17/1``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

IFNAMSIZ = 15
"""Longest Linux interface name, in bytes (the kernel's IFNAMSIZ is 16 with the NUL)."""

_VALID_IFNAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,14}$")
_RESERVED = frozenset({"lo"})
"""Names every namespace already has: a port must never be mapped onto the namespace's loopback."""

PREFIX_PATTERN = re.compile(r"^[a-z][a-z0-9-]{0,19}$")
"""Prefixes go into namespace names and a directory under /run: lower-case, no path separators, short."""


def default_prefix(spec_digest: str) -> str:
    """``fg-`` and six hex digits of the spec's sha256: the same spec gets the same twin, two specs differ."""
    return f"fg-{spec_digest[:6]}"


def valid_prefix(prefix: str) -> bool:
    return bool(PREFIX_PATTERN.match(prefix)) and not prefix.endswith("-")


def netns_names(prefix: str, devices: Iterable[str]) -> dict[str, str]:
    """``{device: namespace}``: ``PREFIX-N`` with N the device's position (switches first, in plan order)."""
    return {device: f"{prefix}-{n}" for n, device in enumerate(devices)}


def is_linux_ifname(name: str) -> bool:
    """True when the kernel accepts ``name`` as is (and it is not the loopback's)."""
    return bool(_VALID_IFNAME.match(name)) and len(name.encode()) <= IFNAMSIZ and name not in _RESERVED


def _hashed(port: str, salt: int) -> str:
    digest = hashlib.sha256(f"{port}\0{salt}".encode()).hexdigest()
    return f"p{digest[:10]}"


def ifname_map(ports: Iterable[str]) -> dict[str, str]:
    """Linux interface names for one device's ports, unique within the device, the same on every run.

    A valid name is kept (``Ethernet8``, ``swp3``, ``ens1np0``); ``Ethernet17/1``
    becomes ``Ethernet17-1``; anything longer or still invalid becomes ``p`` and
    ten hex digits of its sha256. Names kept as is are claimed first, then the
    others in sorted order, so a port's name does not depend on the order the
    plan lists ports in.
    """
    unique = sorted(set(ports))
    mapped: dict[str, str] = {}
    taken: set[str] = set(_RESERVED)
    for port in unique:
        if is_linux_ifname(port):
            mapped[port] = port
            taken.add(port)
    for port in unique:
        if port in mapped:
            continue
        candidate = port.replace("/", "-").replace(":", "-")
        salt = 0
        while not is_linux_ifname(candidate) or candidate in taken:
            candidate = _hashed(port, salt)
            salt += 1
        mapped[port] = candidate
        taken.add(candidate)
    return mapped
