"""A SONiC switch's CONFIG_DB as it comes up: the SKU's ports and the QoS and buffer tables its templates render.

Built from sonic-buildimage's own files in ../shared/reference/sonic-device
(``port_config.ini``, ``hwsku.json``, ``qos.json.j2``, ``buffers(_dynamic).json.j2``),
rendered with Jinja2 the way ``sonic-cfggen`` does at first boot (its
``template_exists`` global and ``sort_by_port_index`` filter), plus the tables
an operator adds that fabgen must never touch (management, loopback).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jinja2
from conftest import require_reference


def _environment(platform: str, hwsku: str) -> jinja2.Environment:
    folder = require_reference("sonic-device", platform, hwsku)
    templates = require_reference("sonic-device", "templates")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader([str(folder), str(templates)]),
                             extensions=["jinja2.ext.do"])

    def template_exists(name: str) -> bool:
        try:
            env.get_template(name)
        except jinja2.TemplateNotFound:
            return False
        return True

    def sort_by_port_index(ports: list[str]) -> list[str]:
        ports.sort(key=lambda p: int(re.sub(r"\D", "", p) or 0))
        return ports

    env.globals["template_exists"] = template_exists
    env.filters["sort_by_port_index"] = sort_by_port_index
    return env


def render(platform: str, hwsku: str, template: str, device_type: str, ports: dict[str, Any]) -> dict[str, Any]:
    """One SKU template rendered for these ports, as JSON."""
    env = _environment(platform, hwsku)
    text = env.get_template(template).render(DEVICE_METADATA={"localhost": {"type": device_type, "hwsku": hwsku}},
                                             PORT=ports)
    return json.loads(text)  # type: ignore[no-any-return]


def sku_ports(platform: str, hwsku: str) -> dict[str, Any]:
    """PORT as SONiC creates it from the SKU's port_config.ini and hwsku.json."""
    folder = require_reference("sonic-device", platform, hwsku)
    interfaces = json.loads((folder / "hwsku.json").read_text())["interfaces"]
    header: list[str] = []
    ports: dict[str, Any] = {}
    for line in (folder / "port_config.ini").read_text().splitlines():
        if line.startswith("#"):
            words = line.lstrip("#").split()
            header = words if words[:2] == ["name", "lanes"] else header
            continue
        if not line.strip():
            continue
        row = dict(zip(header, line.split(), strict=True))
        mode = interfaces[row["name"]]["default_brkout_mode"]
        speed = row.get("speed") or str(int(re.match(r"\d+x(\d+)G", mode).group(1)) * 1000)  # type: ignore[union-attr]
        entry = {"lanes": row["lanes"], "alias": row["alias"], "index": row["index"], "speed": speed,
                 "admin_status": "up", "mtu": "9100"}
        if "autoneg" in interfaces[row["name"]]:
            entry["autoneg"] = interfaces[row["name"]]["autoneg"]
        ports[row["name"]] = entry
    return ports


OPERATOR_TABLES: dict[str, Any] = {
    "MGMT_PORT": {"eth0": {"admin_status": "up", "alias": "eth0"}},
    "MGMT_INTERFACE": {"eth0|192.0.2.10/24": {"gwaddr": "192.0.2.1"}},
    "LOOPBACK_INTERFACE": {"Loopback0": {}, "Loopback0|10.1.0.1/32": {}},
}
"""What an operator configured that is not fabgen's: a patch must leave it as it is."""


def factory_config(platform: str, hwsku: str, device_type: str, dynamic: bool = True) -> dict[str, Any]:
    """The switch's CONFIG_DB after first boot: SKU ports, SONiC's default QoS and buffers, management."""
    ports = sku_ports(platform, hwsku)
    config: dict[str, Any] = {
        "DEVICE_METADATA": {"localhost": {
            "hostname": "sonic", "hwsku": hwsku, "platform": platform, "type": device_type,
            "mac": "1c:34:da:00:00:01", "buffer_model": "dynamic" if dynamic else "traditional"}},
        "PORT": ports,
        **json.loads(json.dumps(OPERATOR_TABLES)),
    }
    buffers = "buffers_dynamic.json.j2" if dynamic else "buffers.json.j2"
    config.update(render(platform, hwsku, buffers, device_type, ports))
    config.update(render(platform, hwsku, "qos.json.j2", device_type, ports))
    return config


def dump(config: dict[str, Any], path: Path) -> Path:
    path.write_text(json.dumps(config, indent=4, sort_keys=True) + "\n")
    return path
