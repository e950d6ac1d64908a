"""``netbox/*.csv``: the plan as NetBox bulk-import files, one per object type, in import order.

Column names are NetBox's own import form fields (``netbox/dcim/forms/bulk_import.py``
and ``netbox/ipam/forms/bulk_import.py`` of netbox-community/netbox, checked at
commit 43fe81f9e, August 2026; :data:`FORM_FIELDS` keeps those lists so the tests
hold every header to them). Import them in the numbered order: a device refers
to its site, role and device type by name, an interface to its device, a cable
and an IP address to a device and interface.

What the plan does not know is a placeholder an operator edits once: the site
is the cluster's name, manufacturers come from the switch OS (Arista for EOS,
NVIDIA for an ``SN`` model, else ``Generic``; hosts are ``Generic`` with their
profile as device type), interface types are the usual optics of the speed
(``400gbase-x-osfp``). Every value is a spec name or number restricted at
validation, and the csv module quotes whatever needs it, so no cell can add a
row or a column.

Cables carry status ``planned`` (NetBox's word for not yet verified); IP
addresses are every link end's /31 and every switch loopback (``is_primary``
on the loopback). Management addresses are left out: the plan does not name
the management interface.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from typing import Final

from fabgen.errors import Problem
from fabgen.plan import FabricPlan
from fabgen.plan.model import Host, Switch
from fabgen.targets.base import RenderContext, Target
from fabgen.targets.csv_text import csv_text, joined_plain, plain_shape
from fabgen.targets.proved_clean import ProvedClean
from fabgen.wiring_netbox import IMPORT_COLUMNS, INTERFACE_TYPE

FORM_FIELDS: Final[dict[str, tuple[str, ...]]] = {
    "SiteImportForm": ("name", "slug", "status", "region", "group", "tenant", "facility", "time_zone",
                       "description", "physical_address", "shipping_address", "latitude", "longitude", "owner",
                       "comments", "tags"),
    "ManufacturerImportForm": ("name", "slug", "description", "owner", "comments", "tags"),
    "DeviceRoleImportForm": ("name", "slug", "parent", "color", "vm_role", "config_template", "description",
                             "owner", "comments", "tags"),
    "DeviceTypeImportForm": ("manufacturer", "default_platform", "model", "slug", "part_number", "u_height",
                             "exclude_from_utilization", "is_full_depth", "subdevice_role", "airflow",
                             "description", "weight", "weight_unit", "owner", "comments", "tags"),
    "DeviceImportForm": ("name", "role", "tenant", "manufacturer", "device_type", "platform", "serial", "asset_tag",
                         "status", "site", "location", "rack", "position", "face", "latitude", "longitude", "parent",
                         "device_bay", "airflow", "virtual_chassis", "vc_position", "vc_priority", "cluster",
                         "description", "config_template", "owner", "comments", "tags"),
    "InterfaceImportForm": ("device", "name", "label", "parent", "bridge", "lag", "type", "speed", "duplex",
                            "enabled", "mark_connected", "wwn", "vdcs", "mtu", "mgmt_only", "description",
                            "poe_mode", "poe_type", "mode", "vlan_group", "untagged_vlan", "tagged_vlans",
                            "qinq_svlan", "vrf", "rf_role", "rf_channel", "rf_channel_frequency",
                            "rf_channel_width", "tx_power", "owner", "tags"),
    "CableImportForm": ("side_a_site", "side_a_device", "side_a_power_panel", "side_a_type", "side_a_name",
                        "side_b_site", "side_b_device", "side_b_power_panel", "side_b_type", "side_b_name",
                        "type", "status", "profile", "tenant", "bundle", "label", "color", "length", "length_unit",
                        "description", "owner", "comments", "tags"),
    "IPAddressImportForm": ("address", "vrf", "tenant", "status", "role", "device", "virtual_machine", "interface",
                            "fhrp_group", "is_primary", "is_oob", "dns_name", "description", "owner", "comments",
                            "tags"),
}
"""Each import form's ``Meta.fields``: the only column names NetBox's bulk import accepts."""

FILES: Final[tuple[tuple[str, str, tuple[str, ...]], ...]] = (
    ("netbox/1-sites.csv", "SiteImportForm", ("name", "slug", "status")),
    ("netbox/2-manufacturers.csv", "ManufacturerImportForm", ("name", "slug")),
    ("netbox/3-device-roles.csv", "DeviceRoleImportForm", ("name", "slug", "color")),
    ("netbox/4-device-types.csv", "DeviceTypeImportForm", ("manufacturer", "model", "slug", "u_height")),
    ("netbox/5-devices.csv", "DeviceImportForm",
     ("name", "role", "manufacturer", "device_type", "status", "site", "description")),
    ("netbox/6-interfaces.csv", "InterfaceImportForm",
     ("device", "name", "type", "speed", "mtu", "enabled", "description")),
    ("netbox/7-cables.csv", "CableImportForm", (*IMPORT_COLUMNS, "status")),
    ("netbox/8-ip-addresses.csv", "IPAddressImportForm",
     ("address", "status", "device", "interface", "is_primary", "description")),
)
"""(path, NetBox import form, the columns fabgen writes), in the order they must be imported."""

INTERFACE_TYPES: Final[dict[int, str]] = {
    100: "100gbase-x-qsfp28", 200: "200gbase-x-qsfp56", 400: "400gbase-x-osfp", 800: "800gbase-x-osfp",
}
"""Gb/s -> ``InterfaceTypeChoices`` value (``netbox/dcim/choices.py``); other speeds are ``other``."""

ROLE_COLORS: Final[dict[str, str]] = {"gpu-host": "4caf50", "leaf": "2196f3", "spine": "9c27b0",
                                      "super-spine": "f44336"}
_TIER_ROLE: Final = {"leaf": "leaf", "spine": "spine", "super_spine": "super-spine"}
_LOOPBACK: Final = {"cumulus": "lo"}
_SLUG_OUT = re.compile(r"[^a-z0-9_-]+")


def slug(text: str) -> str:
    """NetBox's slug alphabet (``[-a-zA-Z0-9_]``), lower-cased; dots and the like become ``-``."""
    return _SLUG_OUT.sub("-", text.lower()).strip("-") or "x"


def manufacturer(switch: Switch) -> str:
    if switch.os == "eos":
        return "Arista"
    return "NVIDIA" if switch.model.upper().startswith("SN") else "Generic"


def loopback_name(switch: Switch) -> str:
    return _LOOPBACK.get(switch.os, "Loopback0")


def netbox_files(plan: FabricPlan) -> dict[str, str]:
    """``{netbox/N-KIND.csv: text}``, the csv module's bytes: by f-string rows when no cell needs quoting.

    Each f-string row of :func:`plain_lines` has its file's width by
    construction, so :func:`~fabgen.targets.csv_text.joined_plain`'s counts
    prove no cell held a character the csv writer would have quoted, and the
    text is then the writer's; if any file fails, every file is written from
    cell tuples by :func:`~fabgen.targets.csv_text.csv_text` instead. A text the
    counts proved is vouched for (:data:`PROVED_CLEAN`): :func:`check` would
    find its header and its unquoted rows of the header's width, which is how
    it was made.
    """
    files: dict[str, str] = {}
    for (path, _, columns), lines in zip(FILES, plain_lines(plan), strict=True):
        text = "\n".join([",".join(columns), *lines, ""])  # the last newline by the join, not a copy of 12 MB
        if not joined_plain(text, len(columns), len(lines) + 1):
            return {path: csv_text(columns, rows) for (path, _, columns), rows in zip(FILES, _cells(plan), strict=True)}
        files[path] = text
    for path, text in files.items():
        PROVED_CLEAN.vouch(path, text)
    return files


PROVED_CLEAN = ProvedClean()
"""The NetBox files :func:`netbox_files` proved plain (:mod:`fabgen.targets.proved_clean`)."""


def _speed_cells(speed: int) -> tuple[str, str]:
    """An interface's ``type`` and ``speed`` (kb/s) cells for a speed in Gb/s."""
    return INTERFACE_TYPES.get(speed, "other"), str(speed * 1_000_000)


class _Kinds(dict[int, str]):
    """Gb/s -> :func:`_speed_cells` joined, made on first use: one dict lookup per port instead of a set of
    every port's speed first."""

    def __missing__(self, speed: int) -> str:
        cells = self[speed] = ",".join(_speed_cells(speed))
        return cells


class _Middles(dict[int, str]):
    """Gb/s -> a switch port row's cells between its name and its description (``type,speed,mtu,enabled,``),
    for one MTU and one admin state, made on first use: a switch port's row is then three values and one
    lookup, not six (120k rows at 24k)."""

    def __init__(self, kinds: _Kinds, mtu: int, shutdown: bool) -> None:
        super().__init__()
        self._kinds, self._tail = kinds, f",{mtu},{'false' if shutdown else 'true'},"

    def __missing__(self, speed: int) -> str:
        cells = self[speed] = self._kinds[speed] + self._tail
        return cells


def host_mtu(host: Host) -> str:
    """A backend NIC's MTU cell: the host network's (what netplan or NetworkManager and ``roce-nic.conf`` set),
    not the switches'; empty for a host whose plan has no backend network (NetBox leaves the MTU unset)."""
    return "" if host.network is None else str(host.network.mtu)


def _catalogue(plan: FabricPlan) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """The device types ((manufacturer, model), first seen first), their manufacturers and the device roles."""
    types: dict[tuple[str, str], None] = {}
    for switch in plan.switches:
        types.setdefault((manufacturer(switch), switch.model), None)
    for host in plan.hosts:
        types.setdefault(("Generic", host.profile), None)
    roles = ["gpu-host", *dict.fromkeys(_TIER_ROLE[s.tier] for s in plan.switches)]
    return list(types), list(dict.fromkeys(m for m, _ in types)), roles


def plain_lines(plan: FabricPlan) -> list[list[str]]:
    """Each file's rows (header left out) as comma-joined lines, in :data:`FILES` order; the cells
    :func:`_cells` gives, printed as they are (also ``bench/floor_netbox.py``'s bytes)."""
    site = plan.spec.cluster.name
    types, makers, roles = _catalogue(plan)
    devices = [f"{s.name},{_TIER_ROLE[s.tier]},{manufacturer(s)},{s.model},planned,{site},{s.os} {s.tier}"
               for s in plan.switches]
    devices += [f"{h.name},gpu-host,Generic,{h.profile},planned,{site},{h.description}" for h in plan.hosts]
    kinds = _Kinds()
    by_mtu: dict[int, tuple[_Middles, _Middles]] = {}  # MTU -> the middles of ports up and shut (False, True)
    interfaces: list[str] = []
    addresses: list[str] = []
    for s in plan.switches:
        name, loopback, mtu = s.name, loopback_name(s), s.qos.mtu
        interfaces.append(f"{name},{loopback},virtual,,,true,loopback")
        addresses.append(f"{s.loopback},active,{name},{loopback},true,loopback")
        middles = by_mtu.get(mtu)
        if middles is None:
            middles = by_mtu[mtu] = (_Middles(kinds, mtu, False), _Middles(kinds, mtu, True))
        interfaces += [f"{name},{p.name},{middles[p.shutdown][p.speed]}{p.description}" for p in s.ports]
    interfaces += [f"{h.name},{n.netdev},{kinds[n.speed]},{host_mtu(h)},{'true' if n.in_service else 'false'},"
                   f"{n.name} rail {n.rail}" for h in plan.hosts for n in h.nics if n.rail is not None]
    t = INTERFACE_TYPE
    links = plan.links
    cables = [f"{k.a_device},{t},{k.a_port},{k.b_device},{t},{k.b_port},planned" for k in links]
    addresses += [line for k in links for line in (
        f"{k.a_address},active,{k.a_device},{k.a_port},,{k.role} to {k.b_device}",
        f"{k.b_address},active,{k.b_device},{k.b_port},,{k.role} to {k.a_device}")]
    return [[f"{site},{slug(site)},planned"], [f"{m},{slug(m)}" for m in makers],
            [f"{r},{slug(r)},{ROLE_COLORS[r]}" for r in roles],
            [f"{m},{model},{slug(f'{m}-{model}')},1" for m, model in types], devices, interfaces, cables, addresses]


def _cells(plan: FabricPlan) -> list[Sequence[Sequence[str]]]:
    """Each file's rows as cell tuples, in :data:`FILES` order, for the csv writer when a cell needs quoting."""
    site = plan.spec.cluster.name
    types, makers, roles = _catalogue(plan)
    devices = [(s.name, _TIER_ROLE[s.tier], manufacturer(s), s.model, "planned", site, f"{s.os} {s.tier}")
               for s in plan.switches]
    devices += [(h.name, "gpu-host", "Generic", h.profile, "planned", site, h.description) for h in plan.hosts]
    interfaces: list[tuple[str, ...]] = []
    addresses: list[tuple[str, ...]] = []
    for s in plan.switches:
        name, loopback, mtu = s.name, loopback_name(s), str(s.qos.mtu)
        interfaces.append((name, loopback, "virtual", "", "", "true", "loopback"))
        addresses.append((s.loopback, "active", name, loopback, "true", "loopback"))
        interfaces += [(name, port.name, *_speed_cells(port.speed), mtu, "false" if port.shutdown else "true",
                        port.description) for port in s.ports]
    interfaces += [(h.name, nic.netdev, *_speed_cells(nic.speed), host_mtu(h), "true" if nic.in_service else "false",
                    f"{nic.name} rail {nic.rail}") for h in plan.hosts for nic in h.nics if nic.rail is not None]
    cables = [(link.a_device, INTERFACE_TYPE, link.a_port, link.b_device, INTERFACE_TYPE, link.b_port, "planned")
              for link in plan.links]
    for link in plan.links:
        addresses.append((link.a_address, "active", link.a_device, link.a_port, "", f"{link.role} to {link.b_device}"))
        addresses.append((link.b_address, "active", link.b_device, link.b_port, "", f"{link.role} to {link.a_device}"))
    return [[(site, slug(site), "planned")], [(m, slug(m)) for m in makers],
            [(r, slug(r), ROLE_COLORS[r]) for r in roles],
            [(m, model, slug(f"{m}-{model}"), "1") for m, model in types], devices, interfaces, cables, addresses]


def check(path: str, text: str) -> list[Problem]:
    """The header is exactly what fabgen meant to write and within NetBox's import form; every row as wide.

    A file with no quoted field (every file of a fabric whose names need no
    quoting) is judged from its skeleton (:func:`~fabgen.targets.csv_text.plain_shape`)
    in one C pass; any other is parsed row by row, the verdict the same.
    """
    expected = next((cols for p, _, cols in FILES if p == path), None)
    if expected is None:
        return [Problem("not a NetBox file fabgen writes", file=path)]
    if PROVED_CLEAN.take(path, text):
        return []
    if text.startswith(",".join(expected) + "\n") and plain_shape(text, len(expected)):
        return []
    rows = list(csv.reader(io.StringIO(text, newline=""), strict=True))
    problems = []
    if not rows or tuple(rows[0]) != expected:
        problems.append(Problem(f"header is not {','.join(expected)}", file=path, line=1))
    problems += [Problem(f"{len(row)} fields, the header has {len(expected)}", file=path, line=n)
                 for n, row in enumerate(rows[1:], 2) if len(row) != len(expected)]
    return problems


def _render(context: RenderContext, plan: FabricPlan) -> dict[str, str]:
    return netbox_files(plan)


TARGET = Target(name="netbox", scope="cluster", summary="NetBox bulk-import CSVs (devices, interfaces, cables, IPs)",
                render=_render, check=check)
