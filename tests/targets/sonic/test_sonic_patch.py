"""The Generic Config Updater patch: applied to a freshly booted SN5600's CONFIG_DB, it yields fabgen's
tables exactly, keeps everything fabgen does not own, and the result passes SONiC's YANG models.

The patch is applied with ``jsonpatch`` (the RFC 6902 library sonic-utilities' GCU itself uses).
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import require_reference
from sonic_factory import OPERATOR_TABLES, factory_config

from fabgen.pipeline import load_spec, plan_fabric
from fabgen.plan.model import FabricPlan
from fabgen.targets.sonic.config_db import config_db
from fabgen.targets.sonic.patch import (
    FIELD_TABLES,
    PatchRefused,
    desired_config,
    gcu_patch,
    gcu_patch_text,
    patched_tables,
)
from tests.helpers import example, run_cli

jsonpatch = pytest.importorskip("jsonpatch")


@pytest.fixture(scope="module")
def pod() -> FabricPlan:
    return plan_fabric(load_spec(example("sonic-pod")))


def _base(ours: dict[str, Any]) -> dict[str, Any]:
    meta = ours["DEVICE_METADATA"]["localhost"]
    return factory_config(meta["platform"], meta["hwsku"], meta["type"])


@pytest.fixture(scope="module")
def yang_dir() -> Path:
    try:
        import libyang  # noqa: F401
    except ImportError:
        message = "libyang not importable: apt-get install libyang2-dev && pip install 'fabgen[yang]'"
        if os.environ.get("FABGEN_REQUIRE_REFERENCE") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return require_reference("sonic-yang")


def test_factory_base_is_valid_sonic(pod: FabricPlan, yang_dir: Path) -> None:
    """The base is realistic: SONiC's own YANG models accept it, factory 3-4 PGs and all."""
    from fabgen.targets.sonic.yang import validate_config_db

    base = _base(config_db(pod, pod.switches[0]))
    assert base["BUFFER_PG"]["Ethernet0|3-4"] == {"profile": "NULL"}
    assert len(base["PORT"]) == 129
    assert validate_config_db(base, yang_dir) == []


@pytest.mark.parametrize("name", ["leaf-r0-p00-01", "spine-01"])
def test_patch_applies_fabgens_tables_and_nothing_else(pod: FabricPlan, name: str, yang_dir: Path) -> None:
    from fabgen.targets.sonic.yang import validate_config_db

    ours = config_db(pod, pod.switch(name))
    base = _base(ours)
    patch = gcu_patch(base, ours)
    result = jsonpatch.apply_patch(copy.deepcopy(base), patch)
    assert result == desired_config(base, ours)
    assert validate_config_db(result, yang_dir) == [], "patched CONFIG_DB fails YANG"
    mine = set(ours["PORT"])
    for table, entries in patched_tables(ours).items():  # the routing tables go in at provisioning
        for key, entry in entries.items():
            if table in FIELD_TABLES:
                owned = FIELD_TABLES[table] or set(entry)
                assert {f: v for f, v in entry.items() if f in owned}.items() <= result[table][key].items()
            else:
                assert result[table][key] == entry, (table, key)  # fabgen's entry, whole
    # SONiC's factory 3-4 PG and its queue 4 are gone from fabgen's ports (config load would keep them) ...
    assert "Ethernet0|3-4" not in result["BUFFER_PG"] and "Ethernet0|4" not in result["QUEUE"]
    # ... and kept on the ports fabgen does not use, with the maps and profiles they still need.
    spare = min(set(base["PORT"]) - mine, key=lambda p: int(p[8:]))
    assert result["BUFFER_PG"][f"{spare}|3-4"] == base["BUFFER_PG"][f"{spare}|3-4"]
    assert result["PORT_QOS_MAP"][spare] == base["PORT_QOS_MAP"][spare]
    assert result["DSCP_TO_TC_MAP"]["AZURE"] == base["DSCP_TO_TC_MAP"]["AZURE"]
    # What the operator configured survives; so do the SKU's port fields fabgen does not write.
    for table, entries in OPERATOR_TABLES.items():
        assert result[table] == entries
    for field in ("mac", "hostname", "type"):  # identity stays the device's; fabgen sets buffer_model only
        assert result["DEVICE_METADATA"]["localhost"][field] == base["DEVICE_METADATA"]["localhost"][field]
    assert result["PORT"]["Ethernet0"]["lanes"] == base["PORT"]["Ethernet0"]["lanes"]
    # No operation touches a table fabgen does not write.
    assert {op["path"].split("/")[1] for op in patch} <= set(patched_tables(ours))


def test_patch_is_deterministic_and_idempotent(pod: FabricPlan) -> None:
    ours = config_db(pod, pod.switches[0])
    base = _base(ours)
    assert gcu_patch_text(base, ours) == gcu_patch_text(copy.deepcopy(base), copy.deepcopy(ours))
    applied = jsonpatch.apply_patch(copy.deepcopy(base), gcu_patch(base, ours))
    assert gcu_patch(applied, ours) == []  # applying it again changes nothing


def test_a_stale_address_on_fabgens_port_goes_and_pointers_are_escaped(pod: FabricPlan) -> None:
    ours = config_db(pod, pod.switches[0])
    base = _base(ours)
    base["INTERFACE"] = {"Ethernet0": {}, "Ethernet0|10.99.0.0/31": {}, "Ethernet500": {},
                         "Ethernet500|10.99.0.2/31": {}}
    patch = gcu_patch(base, ours)
    assert {"op": "remove", "path": "/INTERFACE/Ethernet0|10.99.0.0~131"} in patch  # RFC 6901: / -> ~1
    result = jsonpatch.apply_patch(copy.deepcopy(base), patch)
    assert "Ethernet0|10.99.0.0/31" not in result["INTERFACE"]
    assert "Ethernet500|10.99.0.2/31" in result["INTERFACE"]  # not a port fabgen configures
    address = next(k for k in ours["INTERFACE"] if k.startswith("Ethernet0|"))
    assert address in result["INTERFACE"]


def test_patch_refuses_another_switch(pod: FabricPlan) -> None:
    ours = config_db(pod, pod.switches[0])
    other = _base(ours)
    other["DEVICE_METADATA"]["localhost"]["hwsku"] = "ACS-SN5600"
    with pytest.raises(PatchRefused, match="hwsku is 'ACS-SN5600' on the device"):
        gcu_patch(other, ours)
    unbroken = _base(ours)
    del unbroken["PORT"]["Ethernet4"]
    unbroken["PORT"]["Ethernet0"]["lanes"] = "0,1,2,3,4,5,6,7"
    with pytest.raises(PatchRefused) as info:
        gcu_patch(unbroken, ours)
    messages = [p.message for p in info.value.problems]
    assert any("no port Ethernet4" in m for m in messages) and any("lanes is '0,1,2,3,4,5,6,7'" in m for m in messages)


def test_cli_writes_the_patch(pod: FabricPlan, tmp_path: Path) -> None:
    ours = config_db(pod, pod.switches[0])
    (tmp_path / "ours.json").write_text(json.dumps(ours))
    (tmp_path / "running.json").write_text(json.dumps(_base(ours)))
    code, out, err = run_cli("sonic-patch", str(tmp_path / "ours.json"), "--base", str(tmp_path / "running.json"))
    assert code == 0, err
    assert json.loads(out) == gcu_patch(_base(ours), ours)
    (tmp_path / "bad.json").write_text("{")
    code, _, err = run_cli("sonic-patch", str(tmp_path / "ours.json"), "--base", str(tmp_path / "bad.json"))
    assert code == 2 and "bad.json:1:2: invalid JSON" in err


def test_watchdog_off_removes_the_ports_watchdog_entries() -> None:
    from tests.helpers import edited

    def off(data: dict[str, Any]) -> None:
        data["qos"]["pfc"]["watchdog"]["enabled"] = False

    fabric = plan_fabric(load_spec(edited(off, "sonic-pod")))
    ours = config_db(fabric, fabric.switches[0])
    assert "PFC_WD" not in ours
    base = _base(ours)
    # What `pfcwd start_default` leaves on every port when default_pfcwd_status is enable.
    base["PFC_WD"] = {"GLOBAL": {"POLL_INTERVAL": "200"}, **{
        p: {"action": "drop", "detection_time": "200", "restoration_time": "200"} for p in ("Ethernet0", "Ethernet500")}}
    result = jsonpatch.apply_patch(copy.deepcopy(base), gcu_patch(base, ours))
    assert "Ethernet0" not in result["PFC_WD"]  # fabgen's port: off, as the spec says
    assert "Ethernet500" in result["PFC_WD"] and "GLOBAL" in result["PFC_WD"]  # not fabgen's
