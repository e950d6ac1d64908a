"""Same policy, same meaning: one QoS policy rendered for EOS, SONiC and NVUE reads back identically.

Each OS's output is parsed back into the OS-neutral :class:`CommonQos`
(DSCP -> TC map, lossless priorities, ECN thresholds in bytes, strict queues,
DWRR weights, watchdog timers, MTU); all three must equal each other and the plan.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from fabgen.pipeline import load_spec, plan_fabric, render_fabric
from fabgen.targets.eos.parse import parse_eos_qos
from fabgen.targets.nvue.parse import parse_nvue_qos
from fabgen.targets.qos_common import CommonQos, from_intent
from fabgen.targets.sonic.parse import parse_sonic_qos
from tests.helpers import edited

# EOS wants polling <= min(timeout, recovery)/2; NVUE restores after one quiet
# poll (it has no restore timer). No watchdog satisfies both exactly, so NVUE's
# restore is compared with its poll, everything else across all three OSes.
WATCHDOG = {"detect": "300ms", "restore": "200ms", "poll": "100ms", "action": "drop"}
NVUE_RESTORE_MS = 100


def _on(os_name: str, *, pfc_only: bool = False) -> str:
    def edit(data: dict) -> None:  # type: ignore[type-arg]
        tiers = data["fabric"]["tiers"]
        for tier in tiers.values():
            tier["os"] = os_name
            if os_name == "sonic":
                tier["hwsku"] = "ACS-SN5600"  # the lab's Arista model is no SONiC SKU
        data["qos"]["pfc"]["watchdog"] = dict(WATCHDOG)
        if pfc_only:
            for cls in data["qos"]["classes"].values():
                cls.pop("ecn", None)
            data["nic"]["dcqcn"] = {"enabled": False}
    return edited(edit)


def _pictures(os_name: str, *, pfc_only: bool = False) -> tuple[dict[str, CommonQos], dict[str, CommonQos]]:
    fabric = plan_fabric(load_spec(_on(os_name, pfc_only=pfc_only)))
    files = render_fabric(fabric, targets={"eos": ["eos"], "sonic": ["sonic"], "cumulus": ["nvue"]}[os_name])
    parsed: dict[str, CommonQos] = {}
    for switch in fabric.switches:
        if os_name == "eos":
            parsed[switch.name] = parse_eos_qos(files[f"switches/{switch.name}.cfg"])
        elif os_name == "sonic":
            parsed[switch.name] = parse_sonic_qos(json.loads(files[f"switches/{switch.name}/config_db.json"]))
        else:
            parsed[switch.name] = parse_nvue_qos(files[f"switches/{switch.name}/startup.yaml"])
    expected = {s.name: from_intent(s.qos) for s in fabric.switches}
    return parsed, expected


@pytest.mark.parametrize("pfc_only", [False, True], ids=["dcqcn", "pfc-only"])
def test_one_policy_reads_back_the_same_on_every_os(pfc_only: bool) -> None:
    pictures = {}
    for os_name in ("eos", "sonic", "cumulus"):
        parsed, expected = _pictures(os_name, pfc_only=pfc_only)
        if os_name == "cumulus":
            expected = {name: replace(qos, watchdog=(True, 300, NVUE_RESTORE_MS, "drop")) for name, qos in expected.items()}
        assert parsed == expected, os_name
        pictures[os_name] = parsed
    assert pictures["eos"] == pictures["sonic"]
    nvue = {name: replace(qos, watchdog=pictures["eos"][name].watchdog) for name, qos in pictures["cumulus"].items()}
    assert nvue == pictures["eos"]
    leaf = pictures["eos"]["leaf-r0-p00-01"]
    assert leaf.dscp_to_tc[26] == 3 and leaf.dscp_to_tc[48] == 6 and leaf.dscp_to_tc[0] == 0
    assert leaf.lossless == frozenset({3}) and leaf.strict == frozenset({6})
    assert leaf.weights == ((0, 50), (3, 50))
    assert leaf.ecn == (() if pfc_only else ((3, 150 * 1024, 1500 * 1024, 20),))
    assert leaf.watchdog == (True, 300, 200, "drop") and leaf.mtu == 9214
