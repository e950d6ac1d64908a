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
from fabgen.plan.model import Switch
from fabgen.targets.base import RenderContext, Target
from fabgen.targets.csv_text import csv_text, plain_shape
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
    site = plan.spec.cluster.name
    types: dict[tuple[str, str], None] = {}  # (manufacturer, model), first seen first
    for switch in plan.switches:
        types.setdefault((manufacturer(switch), switch.model), None)
    for host in plan.hosts:
        types.setdefault(("Generic", host.profile), None)
    makers = dict.fromkeys(m for m, _ in types)
    roles = ["gpu-host", *dict.fromkeys(_TIER_ROLE[s.tier] for s in plan.switches)]

    devices = [(s.name, _TIER_ROLE[s.tier], manufacturer(s), s.model, "planned", site, f"{s.os} {s.tier}")
               for s in plan.switches]
    devices += [(h.name, "gpu-host", "Generic", h.profile, "planned", site, h.description) for h in plan.hosts]

    # Every cell a string (the csv writer's str() of each number, done once per distinct speed or MTU).
    speeds = {speed: (INTERFACE_TYPES.get(speed, "other"), str(speed * 1_000_000))
              for speed in {p.speed for s in plan.switches for p in s.ports}
              | {n.speed for h in plan.hosts for n in h.nics}}
    interfaces: list[tuple[str, ...]] = []
    addresses: list[tuple[str, ...]] = []
    for s in plan.switches:
        name, loopback, mtu = s.name, loopback_name(s), str(s.qos.mtu)
        interfaces.append((name, loopback, "virtual", "", "", "true", "loopback"))
        addresses.append((s.loopback, "active", name, loopback, "true", "loopback"))
        interfaces += [(name, port.name, *speeds[port.speed], mtu, "false" if port.shutdown else "true",
                        port.description) for port in s.ports]
    host_mtu = str(plan.qos.mtu)
    interfaces += [(h.name, nic.netdev, *speeds[nic.speed], host_mtu, "true" if nic.in_service else "false",
                    f"{nic.name} rail {nic.rail}") for h in plan.hosts for nic in h.nics if nic.rail is not None]
    cables = [(link.a_device, INTERFACE_TYPE, link.a_port, link.b_device, INTERFACE_TYPE, link.b_port, "planned")
              for link in plan.links]
    for link in plan.links:
        addresses.append((link.a_address, "active", link.a_device, link.a_port, "", f"{link.role} to {link.b_device}"))
        addresses.append((link.b_address, "active", link.b_device, link.b_port, "", f"{link.role} to {link.a_device}"))
    rows: dict[str, Sequence[Sequence[str]]] = {
        "netbox/1-sites.csv": [(site, slug(site), "planned")],
        "netbox/2-manufacturers.csv": [(m, slug(m)) for m in makers],
        "netbox/3-device-roles.csv": [(r, slug(r), ROLE_COLORS[r]) for r in roles],
        "netbox/4-device-types.csv": [(m, model, slug(f"{m}-{model}"), "1") for m, model in types],
        "netbox/5-devices.csv": devices,
        "netbox/6-interfaces.csv": interfaces,
        "netbox/7-cables.csv": cables,
        "netbox/8-ip-addresses.csv": addresses,
    }
    return {path: csv_text(columns, rows[path]) for path, _, columns in FILES}


def check(path: str, text: str) -> list[Problem]:
    """The header is exactly what fabgen meant to write and within NetBox's import form; every row as wide.

    A file with no quoted field (every file of a fabric whose names need no
    quoting) is judged from its skeleton (:func:`~fabgen.targets.csv_text.plain_shape`)
    in one C pass; any other is parsed row by row, the verdict the same.
    """
    expected = next((cols for p, _, cols in FILES if p == path), None)
    if expected is None:
        return [Problem("not a NetBox file fabgen writes", file=path)]
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
