"""Observed wiring, read with :mod:`fabgen.wiring` and put into the plan's names.

Evidence names things its own way: SONiC advertises a port's *alias*
(``etp1``) in LLDP, EOS may send ``Ethernet1`` for ``Ethernet1/1``, hosts may
report their FQDN (``gt00001.dc1.example.net``) and a neighbour's port may come
as an RDMA device name. Before comparing with the plan every device and port
name is mapped to the plan's spelling when an unambiguous one exists; names
that map to nothing are kept as they are (an unknown neighbour is a finding).

Which devices reported matters as much as what they reported: a planned link
is only *missing* if one of its ends sent evidence. :class:`Observed` keeps the
set of reporting devices, including the ones whose LLDP file lists no
neighbour at all (every cable unplugged).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fabgen.errors import FabgenError
from fabgen.wiring import (
    ObservedLink,
    collect_wiring_files,
    device_name_from_path,
    is_cabling_csv,
    read_cabling_csv,
    read_lldp,
)

if TYPE_CHECKING:
    from fabgen.plan.model import FabricPlan

End = tuple[str, str]


@dataclass(frozen=True)
class Evidence:
    """Observed links plus the devices whose view they include (raw names)."""

    links: tuple[ObservedLink, ...]
    reporters: dict[str, str]
    """Device -> the file that speaks for it (an LLDP capture, or a cabling CSV for every device in it)."""


@dataclass(frozen=True)
class Observed:
    """Evidence in the plan's names: one link per cable, and who reported."""

    links: tuple[ObservedLink, ...]
    reporters: dict[str, str]


def read_evidence(paths: Iterable[Path | str]) -> Evidence:
    """Read LLDP captures and cabling CSVs (files or directories: :func:`fabgen.wiring.collect_wiring_files`).

    Also records which device each file speaks for, so that a capture with no
    neighbour still counts as that device's (empty) view.
    """
    files, problems = collect_wiring_files(paths)
    links: list[ObservedLink] = []
    reporters: dict[str, str] = {}
    for path in files:
        try:
            if is_cabling_csv(path):
                found = read_cabling_csv(path)
                for link in found:
                    reporters.setdefault(link.local_device, str(path))
                    reporters.setdefault(link.remote_device, str(path))
            else:
                found = read_lldp(path)
                device = found[0].local_device if found else device_name_from_path(path)
                if device:
                    reporters.setdefault(device, str(path))
        except FabgenError as exc:
            problems.extend(exc.problems)
            continue
        links.extend(found)
    if problems:
        raise FabgenError(problems)
    return Evidence(tuple(links), reporters)


def evidence_from_links(links: Sequence[ObservedLink]) -> Evidence:
    """Evidence from already-read links: LLDP reporters are the local ends, a CSV speaks for both ends."""
    reporters: dict[str, str] = {}
    for link in links:
        reporters.setdefault(link.local_device, link.source)
        if link.origin == "csv":
            reporters.setdefault(link.remote_device, link.source)
    return Evidence(tuple(links), reporters)


class Names:
    """Maps evidence spellings of devices and ports to the plan's."""

    _EOS = re.compile(r"^(?:Ethernet|Eth|Et)(\d+)(?:/1)?$", re.IGNORECASE)
    _SONIC_ALIAS = re.compile(r"^(?:etp|Eth)(\d+)(?:/1)?$", re.IGNORECASE)
    _SONIC = re.compile(r"^Ethernet(\d+)$", re.IGNORECASE)
    _SWP = re.compile(r"^swp(\d+)$", re.IGNORECASE)

    def __init__(self, plan: FabricPlan) -> None:
        from fabgen.plan.ports import lanes_per_port, port_name
        from fabgen.targets.sonic.sku import SKUS

        self._skus = SKUS

        self._port_name = port_name
        self._lanes = lanes_per_port
        self.switches = {s.name: s for s in plan.switches}
        self.hosts = {h.name: h for h in plan.hosts}
        devices = [*self.switches, *self.hosts]
        self._exact = set(devices)
        self._lower: dict[str, str] = {}
        for name in devices:
            self._lower.setdefault(name.lower(), name)
        self._host_ports = {
            h.name: {**{n.name: n.netdev for n in h.nics}, **{n.netdev: n.netdev for n in h.nics}}
            for h in plan.hosts
        }
        self._device_cache: dict[str, str] = {}
        self._port_cache: dict[tuple[str, str], str] = {}

    def device(self, name: str) -> str:
        """The plan's device for ``name`` (exact, case-insensitive, or the first label of an FQDN)."""
        cached = self._device_cache.get(name)
        if cached is not None:
            return cached
        found = name
        if name not in self._exact:
            lowered = name.lower()
            found = self._lower.get(lowered) or self._lower.get(lowered.split(".", 1)[0]) or name
        self._device_cache[name] = found
        return found

    def port(self, device: str, port: str) -> str:
        """The plan's name of ``device``'s port ``port`` (netdev on hosts, OS scheme on switches)."""
        key = (device, port)
        cached = self._port_cache.get(key)
        if cached is not None:
            return cached
        found = port
        host_ports = self._host_ports.get(device)
        if host_ports is not None:
            found = host_ports.get(port, port)
        else:
            switch = self.switches.get(device)
            sku = self._skus.get(switch.hwsku or "") if switch is not None else None
            if sku is not None:  # a SONiC SKU fabgen knows: its own names and aliases (etp33a), nothing else
                found = sku.port_named(port) or port
            elif switch is not None:
                index = self._index(switch.os, port, switch.speed, switch.port_width)
                if index:
                    found = self._port_name(switch.os, index, switch.speed, switch.port_width)
        self._port_cache[key] = found
        return found

    def _index(self, os: str, port: str, speed: int, width: int | None = None) -> int:
        if os == "eos":
            match = self._EOS.match(port)
            return int(match.group(1)) if match else 0
        if os == "sonic":
            match = self._SONIC.match(port)
            if match:
                number, width = int(match.group(1)), width or self._lanes(speed)
                return number // width + 1 if number % width == 0 else 0
            match = self._SONIC_ALIAS.match(port)
            return int(match.group(1)) if match else 0
        match = self._SWP.match(port)
        return int(match.group(1)) if match else 0


def normalise(evidence: Evidence, plan: FabricPlan) -> Observed:
    """Evidence in the plan's names, one link per cable."""
    names = Names(plan)
    planned = {(k.a_device, k.a_port) for k in plan.links} | {(k.b_device, k.b_port) for k in plan.links}
    links = []
    for link in evidence.links:
        if (link.local_device, link.local_port) in planned and (link.remote_device, link.remote_port) in planned:
            links.append(link)  # already in the plan's names (a cabling.csv fabgen wrote)
            continue
        local = names.device(link.local_device)
        remote = names.device(link.remote_device)
        links.append(ObservedLink(local, names.port(local, link.local_port), remote,
                                  names.port(remote, link.remote_port), link.source, link.line, link.origin))
    reporters: dict[str, str] = {}
    for device, source in evidence.reporters.items():
        reporters.setdefault(names.device(device), source)
    return Observed(tuple(_dedupe(links)), reporters)


def _dedupe(links: list[ObservedLink]) -> list[ObservedLink]:
    """One report per cable, as :func:`fabgen.wiring.dedupe_links` keeps it (LLDP over CSV, then the
    first source and line), in a plain sorted order: its natural sort costs seconds on 70k links."""
    best: dict[frozenset[tuple[str, str]], ObservedLink] = {}
    for link in links:
        key = link.key()
        current = best.get(key)
        if current is None or _rank(link) < _rank(current):
            best[key] = link
    return sorted(best.values(), key=lambda o: (o.local_device, o.local_port, o.remote_device, o.remote_port,
                                                o.source, o.line))


def _rank(link: ObservedLink) -> tuple[bool, str, int]:
    return (link.origin != "lldp", link.source, link.line)
