"""FRR configuration of one twin switch, printed from the routing plan (``Switch.bgp``).

FRR is what SONiC and Cumulus run, so booting it from the plan checks the plan
itself: the ASNs, one neighbour per /31, multipath, what is originated. The
lines are FRR 8.4's (Debian 12), confirmed by FRR's own parser in the tests
(``bgpd -C``) and by the running daemons in the twin.

Three files per switch, because each daemon reads its own ``-f`` file and
reports every line of another daemon as unknown:

- ``frr.conf`` for bgpd;
- ``bfdd.conf`` when the plan asks for BFD;
- ``zebra.conf``: a hostname, and ``no zebra nexthop kernel enable``.
  Interfaces and addresses are set with ``ip``; zebra learns them from the
  kernel. Kernel nexthop objects are off because with them a cable cut and
  restored left the kernel's group without the restored next hop while
  zebra's RIB listed it (FRR 8.4.4, measured in this twin); routes with their
  next hops inline (as SONiC's fpmsyncd programs them) come back whole.

Two lines exist for the twin and not for a switch: ``frr defaults datacenter``
(the profile Cumulus ships: fast timers, no MRAI wait) and ``timers connect``
(a session whose peer was not listening yet is retried after one second instead
of ten), both so that a lab converges in seconds rather than tens of seconds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fabgen.plan.model import BgpIntent, Switch
from fabgen.twin.system import TwinError

BFD_PROFILE = "fabgen"
CONNECT_RETRY_S = 1

_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$")
"""Every string the config interpolates: no space, quote or newline can reach FRR's parser."""


def _safe(value: str, what: str, switch: str) -> str:
    if not _SAFE.match(value):
        raise TwinError(f"{switch}: {what} {value!r} cannot go into an FRR config line")
    return value


@dataclass(frozen=True, slots=True)
class FrrFiles:
    bgpd: str
    bfdd: str | None
    zebra: str


def frr_files(switch: Switch, *, connect_retry: int | None = CONNECT_RETRY_S) -> FrrFiles:
    """The daemons' configs for ``switch``; refuses a switch without a routing plan."""
    if switch.bgp is None:
        raise TwinError(f"{switch.name}: no routing plan (fabric.routing is off or excludes it); nothing to boot")
    name = _safe(switch.name, "name", switch.name)
    return FrrFiles(bgpd_conf(name, switch.bgp, connect_retry=connect_retry),
                    bfdd_conf(switch.bgp), f"hostname {name}\nno zebra nexthop kernel enable\n!\n")


def bgpd_conf(name: str, bgp: BgpIntent, *, connect_retry: int | None = CONNECT_RETRY_S) -> str:
    lines = [
        "frr defaults datacenter",
        f"hostname {name}",
        "!",
        f"router bgp {int(bgp.asn)}",
        f" bgp router-id {_safe(bgp.router_id, 'router-id', name)}",
        # FRR 8 refuses to send or accept eBGP routes without a policy (RFC 8212) unless told otherwise;
        # the plan's policy is "originate loopbacks and host subnets", expressed by the network statements.
        " no bgp ebgp-requires-policy",
    ]
    if bgp.multipath_relax:
        lines.append(" bgp bestpath as-path multipath-relax")
    if bgp.keepalive is not None and bgp.hold is not None:
        lines.append(f" timers bgp {int(bgp.keepalive)} {int(bgp.hold)}")
    for n in bgp.neighbors:
        address = _safe(n.address, "neighbor address", name)
        lines.append(f" neighbor {address} remote-as {int(n.remote_asn)}")
        lines.append(f" neighbor {address} description {_safe(n.description, 'description', name)}")
        if connect_retry is not None:
            lines.append(f" neighbor {address} timers connect {int(connect_retry)}")
        if bgp.bfd is not None:
            lines.append(f" neighbor {address} bfd profile {BFD_PROFILE}")
    lines += [" !", " address-family ipv4 unicast"]
    lines += [f"  network {_safe(p, 'network', name)}" for p in bgp.networks]
    lines += [f"  maximum-paths {int(bgp.maximum_paths)}", " exit-address-family", "exit", "!"]
    return "\n".join(lines) + "\n"


def bfdd_conf(bgp: BgpIntent) -> str | None:
    if bgp.bfd is None:
        return None
    interval = int(bgp.bfd.interval_ms)
    return "\n".join([
        "bfd",
        f" profile {BFD_PROFILE}",
        f"  transmit-interval {interval}",
        f"  receive-interval {interval}",
        f"  detect-multiplier {int(bgp.bfd.multiplier)}",
        " exit",
        "exit",
        "!",
    ]) + "\n"


@dataclass(frozen=True, slots=True)
class ParsedBgp:
    """What a bgpd config says, read back line by line (for tests and ``verify``'s report)."""

    asn: int
    router_id: str
    neighbors: dict[str, int]
    networks: tuple[str, ...]
    maximum_paths: int
    multipath_relax: bool
    bfd_neighbors: tuple[str, ...]


_NEIGHBOR = re.compile(r"^ neighbor (\S+) remote-as (\d+)$")


def parse_bgpd_conf(text: str) -> ParsedBgp:
    """Parse the subset of FRR syntax :func:`bgpd_conf` writes; anything else is an error, not skipped."""
    asn, router_id, paths, relax = 0, "", 0, False
    neighbors: dict[str, int] = {}
    networks: list[str] = []
    bfd: list[str] = []
    known = re.compile(r"^(frr defaults \w+|hostname \S+|!| !|exit| exit-address-family| address-family ipv4 unicast|"
                       r" no bgp ebgp-requires-policy| timers bgp \d+ \d+| neighbor \S+ description \S+|"
                       r" neighbor \S+ timers connect \d+)$")
    for line in text.splitlines():
        if m := re.match(r"^router bgp (\d+)$", line):
            asn = int(m.group(1))
        elif m := re.match(r"^ bgp router-id (\S+)$", line):
            router_id = m.group(1)
        elif m := _NEIGHBOR.match(line):
            neighbors[m.group(1)] = int(m.group(2))
        elif m := re.match(r"^ neighbor (\S+) bfd profile \S+$", line):
            bfd.append(m.group(1))
        elif m := re.match(r"^  network (\S+)$", line):
            networks.append(m.group(1))
        elif m := re.match(r"^  maximum-paths (\d+)$", line):
            paths = int(m.group(1))
        elif line == " bgp bestpath as-path multipath-relax":
            relax = True
        elif not known.match(line):
            raise ValueError(f"unexpected FRR line: {line!r}")
    return ParsedBgp(asn, router_id, neighbors, tuple(networks), paths, relax, tuple(bfd))
