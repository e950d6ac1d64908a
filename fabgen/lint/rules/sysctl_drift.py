"""FG508 deployed sysctl drift: a host's backend ``sysctl.conf`` as collected, against the plan's.

Compared by what ``systemd-sysctl`` writes from it (:mod:`fabgen.lint.deployed_sysctl`), so order, comments and
spelling (``/`` or ``.`` keys) are not drift. For ``arp_ignore``, ``arp_announce`` and ``rp_filter`` the kernel
applies the larger of ``conf/all`` and the interface's value, so a ``net.ipv4.conf.all`` line (or a glob) the
file adds counts where it is the larger. Only the plan's keys are compared, and a deployed value is printed only
when it is a small number.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from fabgen.lint.context import LintContext
from fabgen.lint.deployed import DeployedPair, pair_hits
from fabgen.lint.finding import Hit
from fabgen.targets.hostnet.parse_sysctl import SysctlFile

_HINT = ("install the generated sysctl.conf again (as /etc/sysctl.d/60-fabgen-roce.conf, then `sysctl --system`), "
         "or put the change in the spec")
_LARGER_WINS = frozenset({"arp_ignore", "arp_announce", "rp_filter"})
"""``conf`` keys the kernel reads as max(``all``, interface) (``IN_DEV_MAXCONF`` in ``inetdevice.h``)."""
_NUMBER = re.compile(r"[0-9]{1,3}")
"""A value that may be printed and is compared as a number (the kernel reads ``02`` as 2)."""


def sysctl_drift(ctx: LintContext) -> Iterator[Hit]:
    """A host's deployed backend sysctl file differs from the plan.

    What it checks:
        With ``--deployed DIR``, each host's ``hosts/NAME/sysctl.conf`` (the
        copy in ``/etc/sysctl.d/60-fabgen-roce.conf``), or a profile's shared
        ``hosts/_profiles/P/sysctl.conf``, is read as ``systemd-sysctl`` reads
        it and compared with what fabgen renders for it: ``arp_ignore``,
        ``arp_announce`` and ``rp_filter`` of each backend NIC, as the kernel
        applies them (the larger of the interface's and ``conf.all``'s).

    Why it matters:
        With eight NICs on one host, ``arp_ignore=0`` lets a leaf learn one
        rail's address on another rail's port, and ``arp_announce=0`` sends ARP
        with another NIC's address: RoCE traffic then enters through the wrong
        NIC. A strict ``rp_filter`` (1) drops packets whose reply route leaves
        by another NIC, which per-NIC routing tables make common. The host still
        pings; RoCE on some rails stalls.

    Example:
        # DIR/hosts/lab01/sysctl.conf, edited on the host
        net.ipv4.conf.ens1np0.rp_filter = 1

    Fix:
        Install the generated ``sysctl.conf`` again and run ``sysctl --system``,
        or, if the change was intended, put it in the spec.
    """
    if ctx.deployed is None:
        return
    for deployed in ctx.deployed.sysctls:
        yield from _file(deployed)


def _file(deployed: DeployedPair[SysctlFile]) -> Iterator[Hit]:
    found, expected = deployed.found, deployed.expected
    said, first = ([], 0) if found is None or expected is None else _differences(found, expected)
    yield from pair_hits(deployed, "sysctl.conf", said, first, _HINT)


def _differences(found: SysctlFile, expected: SysctlFile) -> tuple[list[str], int]:
    """``key value (plan value)`` for each planned key the kernel holds otherwise, and the line of the first."""
    said: list[str] = []
    first = 0
    for path, (want, _) in expected.explicit.items():
        have, line, through_all = _effective(found, path)
        if have is not None and _same(have, want):
            continue
        parts = path.split("/")
        name = f"{parts[-2]} {parts[-1]}" if path.startswith("net/ipv4/conf/") else path
        shown = "not set" if have is None else have if _NUMBER.fullmatch(have) else "another value"
        said.append(f"{name} {shown}{' (conf.all)' if through_all else ''} (plan {want})")
        first = first or line
    return said, first


def _effective(found: SysctlFile, path: str) -> tuple[str | None, int, bool]:
    """(value, line, from ``conf/all``) the kernel holds for ``path`` after this file; value None when it sets none.

    For a key the kernel reads as max(all, interface), a larger ``conf/all`` value the file sets is the one that
    counts; without the interface's own, the key is not set (what ``all`` or the distribution gives is not the
    plan's line).
    """
    own = found.value(path)
    if own is None:
        return None, 0, False
    parts = path.split("/")
    if len(parts) == 5 and parts[:3] == ["net", "ipv4", "conf"] and parts[4] in _LARGER_WINS:
        every = found.value("/".join((*parts[:3], "all", parts[4])))
        if every is not None and _NUMBER.fullmatch(every[0]) and _NUMBER.fullmatch(own[0]) \
                and int(every[0]) > int(own[0]):
            return every[0], every[1], True
    return own[0], own[1], False


def _same(have: str, want: str) -> bool:
    if _NUMBER.fullmatch(have) and _NUMBER.fullmatch(want):
        return int(have) == int(want)
    return have == want
