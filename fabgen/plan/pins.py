"""Pinned names and addresses (``fabric.devices``, ``fabric.ipam``) over the positional ones.

Why refuse rather than repair: a pin is an operator's statement about a real
device. Two devices on one address, an address outside its pool, or a pin for
a device the plan does not have are mistakes that would otherwise surface as
a duplicate-IP outage; each is refused where it is written (the spec's line,
or the IPAM file's own row).

Keys are the planner's names (``leaf-r0-p00-01``, a host's name). A ``name``
pin renames a switch; everything else in the spec that names switches
(``fabric.cabling``, overrides, routing globs) uses the new name, as cabled.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fabgen.errors import Problem, SpecError
from fabgen.source import SourceDoc, spec_problem

if TYPE_CHECKING:
    from fabgen.plan.addressing import StableAddresses
    from fabgen.spec import ClusterSpec
    from fabgen.spec.ipam import IpamRow


@dataclass(frozen=True, slots=True)
class Pin:
    device: str
    """The planner's name."""
    field: str
    address: ipaddress.IPv4Address
    where: Callable[[str], Problem]
    """The problem at the pin's own line."""
    origin: str
    """``spec`` or the IPAM file, for messages."""


def _spec_pins(spec: ClusterSpec, doc: SourceDoc | None) -> list[Pin]:
    pins = []
    for device, pin in spec.fabric.devices.items():
        for field in ("loopback", "mgmt"):
            value = getattr(pin, field)
            if value is not None:
                path = ("fabric", "devices", device, field)
                pins.append(Pin(device, field, value, lambda m, p=path: spec_problem(doc, m, p), "the spec"))  # type: ignore[misc]
    return pins


def _ipam_pins(rows: Iterable[IpamRow]) -> list[Pin]:
    return [Pin(r.device, r.field, r.address, r.problem, r.file) for r in rows]


def renames(spec: ClusterSpec, doc: SourceDoc | None, switches: Iterable[str], hosts: Iterable[str]) -> dict[str, str]:
    """Planner name -> pinned name of every renamed switch; refuses unknown keys and clashing names."""
    switch_names, host_names = set(switches), set(hosts)
    out: dict[str, str] = {}
    problems: list[Problem] = []
    for device, pin in spec.fabric.devices.items():
        if device not in switch_names and device not in host_names:
            problems.append(spec_problem(doc, f"fabric.devices names {device!r}, which this plan does not have "
                                              "(keys are the planner's switch names and host names)",
                                         ("fabric", "devices", device)))
            continue
        if pin.name is None:
            continue
        if device in host_names:
            problems.append(spec_problem(doc, f"{device} is a host: its name comes from its host group",
                                         ("fabric", "devices", device, "name")))
            continue
        out[device] = pin.name
    taken: dict[str, str] = {}
    for old, new in sorted(out.items()):
        clash = taken.get(new) or (new if new in host_names or (new in switch_names and new not in out) else None)
        if clash is not None:
            problems.append(spec_problem(doc, f"{old} cannot be renamed {new}: {clash} already has that name",
                                         ("fabric", "devices", old, "name")))
        taken[new] = old
    problems += _path_clashes(doc, switch_names, out)
    if problems:
        raise SpecError(problems)
    return out


SWITCH_FILE_SUFFIXES = (".cfg", ".session", ".install.json")
"""What follows a switch's name in the files fabgen writes beside it under ``switches/`` (EOS's configuration and
session, every OS's install map), the rest being a directory of that name (SONiC, NVUE).
``tests/plan/test_pins.py`` checks the examples of every OS write nothing else there."""


def _path_clashes(doc: SourceDoc | None, planned: set[str], renamed: dict[str, str]) -> list[Problem]:
    """A pinned name that is another switch's name plus one of :data:`SWITCH_FILE_SUFFIXES`: one switch's file
    would be the other's file or directory (``leaf-01.install.json``), which the writer can only refuse halfway
    through writing; refused here, at the pin."""
    final = {renamed.get(name, name): name for name in planned}
    problems = []
    for name, key in sorted(final.items()):
        for suffix in SWITCH_FILE_SUFFIXES:
            stem = name[:-len(suffix)] if name.endswith(suffix) else None
            if stem is not None and stem in final:
                pinned = key if key in renamed else final[stem]
                problems.append(spec_problem(
                    doc, f"{name} cannot be a switch name beside {stem}: {stem}'s switches/{stem}{suffix} is where "
                         f"{name}'s own files would go", ("fabric", "devices", pinned, "name")))
    return problems


def apply_pins(spec: ClusterSpec, doc: SourceDoc | None, addresses: StableAddresses, renamed: dict[str, str],
               hosts: list[str]) -> None:
    """Check every pin and hand the valid ones to ``addresses`` (its ``pinned`` map)."""
    spec_pins = _spec_pins(spec, doc)
    ipam_pins = _ipam_pins(spec.ipam_rows)
    host_index = {name: i for i, name in enumerate(hosts)}
    switches = set(addresses.switches)
    problems: list[Problem] = []
    in_spec = {(p.device, p.field) for p in spec_pins}
    pools = {"loopback": spec.fabric.addressing.loopbacks, "mgmt": spec.fabric.addressing.mgmt}
    chosen: dict[tuple[str, str], Pin] = {}
    for pin, from_ipam in [*((p, False) for p in spec_pins), *((p, True) for p in ipam_pins)]:
        final = renamed.get(pin.device, pin.device)
        if from_ipam and (pin.device, pin.field) in in_spec:
            problems.append(pin.where(f"{pin.device}'s {pin.field} is pinned in the spec too (fabric.devices); "
                                      "keep one"))
            continue
        if final not in switches and pin.device not in host_index:
            problems.append(pin.where(f"{pin.device} is not a device of this plan"))
            continue
        if pin.field == "loopback" and final not in switches:
            problems.append(pin.where(f"{pin.device} is a host: hosts have no loopback in the plan"))
            continue
        pool = pools[pin.field]
        if pool is None:
            problems.append(pin.where(f"{pin.device}: mgmt pinned, but fabric.addressing.mgmt is not set"))
            continue
        if pin.address not in pool or (pin.address in (pool.network_address, pool.broadcast_address) and pool.prefixlen < 31):
            problems.append(pin.where(f"{pin.device}: {pin.field} {pin.address} is outside its pool {pool}"))
            continue
        if pin.field == "mgmt" and pin.address == spec.fabric.addressing.mgmt_gateway:
            problems.append(pin.where(f"{pin.device}: mgmt {pin.address} is fabric.addressing.mgmt_gateway, the "
                                      "management network's router: a device there would route to itself"))
            continue
        chosen[(final, pin.field)] = pin
    if problems:
        raise SpecError(problems)
    addresses.pin({key: str(pin.address) for key, pin in chosen.items()})
    _no_two_devices_on_one_address(addresses, chosen, hosts, problems)
    if problems:
        raise SpecError(problems)


def _no_two_devices_on_one_address(addresses: StableAddresses, chosen: dict[tuple[str, str], Pin],
                                   hosts: list[str], problems: list[Problem]) -> None:
    for field in ("loopback", "mgmt"):
        if not any(f == field for _, f in chosen):
            continue
        holder: dict[str, str] = {}
        devices: list[tuple[str, str | None]] = [(s, addresses.loopback(s) if field == "loopback"
                                                  else addresses.switch_mgmt(s)) for s in addresses.switches]
        if field == "mgmt":
            devices += [(h, addresses.host_mgmt(i, h)) for i, h in enumerate(hosts)]
        # Pinned devices last, so the message lands on a pin, never on a device that kept its position.
        devices.sort(key=lambda d: (d[0], field) in chosen)
        for device, address in devices:
            if address is None:
                continue
            bare = address.partition("/")[0]
            other = holder.setdefault(bare, device)
            if other != device:
                pin = chosen[(device, field)]
                problems.append(pin.where(f"{pin.device}: {field} {bare} is also {other}'s"))
