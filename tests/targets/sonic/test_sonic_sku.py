"""fabgen's SONiC SKU tables against sonic-buildimage's own files, field by field.

fabgen writes its SKUs as rules (:mod:`fabgen.targets.sonic.sku`); these tests
read the real ``port_config.ini``, ``hwsku.json``, ``pg_profile_lookup.ini``,
``buffers_defaults_t0/t1.j2`` and ``hwskus.tsv`` from ../shared/reference and
fail on any difference, so the rules cannot drift from what a switch ships.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import require_reference
from sonic_factory import render

from fabgen.targets.sonic.sku import (
    SKUS,
    Sku,
    breakout_speeds,
    fabric_ports,
    lanes_per_port,
    lookup_cable,
    sku_hint,
)


def _sku_dir(sku: Sku) -> Path:
    return require_reference("sonic-device", sku.platform, sku.name)


def _port_config(path: Path) -> list[dict[str, str]]:
    """Rows of a port_config.ini; the header is the last comment line naming the columns."""
    rows, header = [], []
    for line in path.read_text().splitlines():
        if line.startswith("#"):
            words = line.lstrip("#").split()
            if words[:2] == ["name", "lanes"]:
                header = words
            continue
        if line.strip():
            rows.append(line.split())
    assert header[:4] == ["name", "lanes", "alias", "index"]
    return [dict(zip(header, row, strict=True)) for row in rows]


@pytest.mark.parametrize("name", sorted(SKUS))
def test_every_known_sku_exists_in_sonic_with_its_platform(name: str) -> None:
    table = require_reference("sonic-device", "hwskus.tsv").read_text().splitlines()
    rows = {tuple(line.split("\t")) for line in table if line.strip()}
    assert ("mellanox", SKUS[name].platform, name) in rows


@pytest.mark.parametrize("name", sorted(SKUS))
def test_port_table_equals_port_config_ini_and_hwsku_json(name: str) -> None:
    sku = SKUS[name]
    folder = _sku_dir(sku)
    ini = _port_config(folder / "port_config.ini")
    interfaces = json.loads((folder / "hwsku.json").read_text())["interfaces"]
    assert [p.name for p in sku.ports] == [row["name"] for row in ini] == list(interfaces)
    for port, row in zip(sku.ports, ini, strict=True):
        assert ",".join(map(str, port.lanes)) == row["lanes"], port.name
        assert port.alias == row["alias"] and str(port.index) == row["index"], port.name
        entry = interfaces[port.name]
        assert port.breakout == entry["default_brkout_mode"], port.name
        assert port.autoneg == entry.get("autoneg"), port.name
        # port_config.ini's speed column when it has one, else the breakout mode's speed.
        speed = int(row["speed"]) if "speed" in row else breakout_speeds(port.breakout)[1] * 1000
        assert port.speed == speed, port.name
        assert len(port.lanes) * breakout_speeds(port.breakout)[0] in (len(port.lanes), 8), port.name


@pytest.mark.parametrize("name", sorted(SKUS))
def test_headroom_lookup_equals_pg_profile_lookup_ini(name: str) -> None:
    sku = SKUS[name]
    rows = []
    for line in (_sku_dir(sku) / "pg_profile_lookup.ini").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            speed, cable, size, xon, xoff, threshold = line.split()
            rows.append((int(speed), int(cable.rstrip("m")), int(size), int(xon), int(xoff), int(threshold)))
    assert rows == [(s, c, h.size, h.xon, h.xoff, h.threshold) for s, c, h in sku.pg_lookup]


@pytest.mark.parametrize("name", sorted(SKUS))
@pytest.mark.parametrize("topo", ["t0", "t1"])
def test_pools_equal_buffers_defaults(name: str, topo: str) -> None:
    sku = SKUS[name]
    text = (_sku_dir(sku) / f"buffers_defaults_{topo}.j2").read_text()
    values = dict(re.findall(r"{%\s*set\s+(\w+)_pool_size\s*=\s*'(\d+)'\s*%}", text))
    pools = sku.pools_t0 if topo == "t0" else sku.pools_t1
    assert {k: int(v) for k, v in values.items()} == {
        "ingress_lossless": pools.ingress_lossless, "ingress_lossy": pools.ingress_lossy,
        "egress_lossless": pools.egress_lossless, "egress_lossy": pools.egress_lossy,
    }


@pytest.mark.parametrize("name", sorted(SKUS))
def test_create_only_config_db_buffers_is_the_skus(name: str) -> None:
    sku = SKUS[name]
    path = _sku_dir(sku) / "create_only_config_db_buffers.json"
    shipped = path.exists() and json.loads(path.read_text())["DEVICE_METADATA"]["localhost"].get(
        "create_only_config_db_buffers") == "true"
    assert sku.create_only_config_db_buffers == shipped


def test_asic_is_the_platforms_in_asic_table() -> None:
    text = require_reference("sonic-device", "templates", "asic_table.j2").read_text()
    for sku in SKUS.values():
        family = re.search(rf"'{re.escape(sku.platform)}':'MELLANOX-SPECTRUM-(\d)'", text)
        assert family is not None and sku.asic == f"spectrum{family.group(1)}"


def test_fabric_ports_per_speed() -> None:
    acs, o128 = SKUS["ACS-SN5600"], SKUS["Mellanox-SN5600-O128"]
    assert len(fabric_ports(acs, 800)) == len(fabric_ports(acs, 400)) == 64 and lanes_per_port(acs, 400) == 8
    assert len(fabric_ports(o128, 400)) == 128 and lanes_per_port(o128, 400) == 4
    assert fabric_ports(o128, 800) == ()  # a 2x400G breakout cannot run a port at 800G
    assert lanes_per_port(acs, 25) is None  # the SFP and the cages differ in width


def test_hint_and_cable_rounding() -> None:
    assert sku_hint("Mellanox-SN5600-O64") == "; did you mean 'Mellanox-SN5600-O128'?"
    assert "ACS-SN5600" in sku_hint("zzz")
    acs = SKUS["ACS-SN5600"]
    assert [lookup_cable(acs, 400_000, m) for m in (1, 5, 6, 40, 41, 300, 301)] == [5, 5, 40, 40, 300, 300, None]


# -- buffers as SONiC's own templates render them for the same switch -------------------------


def _sonic_render(config: dict[str, Any], dynamic: bool) -> dict[str, Any]:
    """The SKU's buffers(_dynamic).json.j2, rendered as sonic-cfggen does at first boot, for fabgen's ports."""
    meta = config["DEVICE_METADATA"]["localhost"]
    name = "buffers_dynamic.json.j2" if dynamic else "buffers.json.j2"
    return render(meta["platform"], meta["hwsku"], name, meta["type"], config["PORT"])


def _by_index(table: dict[str, Any]) -> dict[tuple[str, int], str]:
    out = {}
    for key, value in table.items():
        port, _, run = key.partition("|")
        low, _, high = run.partition("-")
        for i in range(int(low), int(high or low) + 1):
            out[(port, i)] = value["profile"]
    return out


def _traditional(data: dict[str, Any]) -> None:
    for tier in ("leaf", "spine"):
        data["fabric"]["tiers"][tier]["buffers"] = {"model": "traditional"}


@pytest.mark.parametrize("model", ["dynamic", "traditional"])
def test_buffer_objects_are_what_the_sku_template_renders(model: str) -> None:
    from fabgen.pipeline import load_spec, plan_fabric
    from fabgen.targets.sonic.config_db import config_db
    from tests.helpers import edited, example

    spec = load_spec(example("sonic-pod")) if model == "dynamic" else load_spec(edited(_traditional, "sonic-pod"))
    fabric = plan_fabric(spec)
    for switch in fabric.switches:
        ours = config_db(fabric, switch)
        theirs = _sonic_render(ours, model == "dynamic")
        pools = {name: {k: v for k, v in pool.items() if k != "xoff"}  # a shared headroom pool is fabgen's choice
                 for name, pool in ours["BUFFER_POOL"].items()}
        assert pools == theirs["BUFFER_POOL"], switch.name  # t0 sizes on leaves, t1 on spines
        assert {k: v for k, v in ours["BUFFER_PROFILE"].items() if not k.startswith("pg_lossless_")} == \
            theirs["BUFFER_PROFILE"], switch.name
        for table in ("BUFFER_PORT_INGRESS_PROFILE_LIST", "BUFFER_PORT_EGRESS_PROFILE_LIST"):
            assert ours[table] == theirs[table], (switch.name, table)
        # SONiC's default policy makes 3-4 lossless, the pod's only 3: compare the indexes both treat alike.
        for table in ("BUFFER_PG", "BUFFER_QUEUE"):
            mine, sonic = _by_index(ours[table]), _by_index(theirs[table])
            alike = [k for k in sonic if k[1] != 4]
            assert alike and all(k in mine for k in alike), (switch.name, table)
            if table == "BUFFER_PG" and model == "traditional":
                alike = [k for k in alike if k[1] == 0]  # traditional: buffermgrd adds the lossless PGs itself
            assert {k: mine[k] for k in alike} == {k: sonic[k] for k in alike}, (switch.name, table)
        if model == "dynamic":
            for table in ("DEFAULT_LOSSLESS_BUFFER_PARAMETER", "LOSSLESS_TRAFFIC_PATTERN"):
                assert ours[table] == theirs[table], (switch.name, table)
        else:
            assert "LOSSLESS_TRAFFIC_PATTERN" not in ours and "LOSSLESS_TRAFFIC_PATTERN" not in theirs
