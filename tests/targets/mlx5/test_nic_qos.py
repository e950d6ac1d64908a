"""The mlx5 NIC scripts: rendered from an intent, then run for real on a fake host.

The fake host (``nic_fake/nicfake.py``) is a directory tree standing in for
/sys, /sys/kernel/debug and /sys/kernel/config, plus stub mlnx_qos, ethtool,
dcb and mlxconfig that keep state and log their calls. Each scenario checks
what the script wrote and called, then that a second run writes and calls
nothing that changes state.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from fabgen._resources import resource_dir
from fabgen.pipeline import __version__, load_spec, plan_fabric, render_fabric
from fabgen.plan.nic_intent import (
    CC_PARAMS,
    DcqcnIntent,
    FirmwareDevice,
    FirmwareIntent,
    HostNicIntent,
    NicPort,
    cc_param,
    driver_default_dscp_to_priority,
)
from fabgen.targets.mlx5.scripts import (
    PLAN_FORMAT,
    nic_script_path,
    plan_path,
    plan_problems,
    render_firmware_script,
    render_nic_plan,
    render_nic_script,
    shell_quote,
)
from tests.helpers import EXAMPLE_NAMES, example, require_tool

sys.path.insert(0, str(Path(__file__).resolve().parent / "nic_fake"))
import nicfake
from conftest import require_reference
from nicfake import FakeHost, FakeNic

# ---- intents ------------------------------------------------------------------------

GT_NICS = tuple(
    NicPort(name=f"mlx5_{i}", netdev=f"ens{i + 1}np0", pci=f"0000:{0x17 + 0x10 * i:02x}:00.0", rail=i)
    for i in range(8)
)
PRIO_TC = (0, 0, 0, 1, 0, 0, 2, 0)
TC_TSA = ("ets", "ets", "strict", "ets", "ets", "ets", "ets", "ets")
TC_BW = (50, 50, 0, 0, 0, 0, 0, 0)
PFC = "0,0,0,1,0,0,0,0"


def grand_teton(*, dcqcn: bool = True, nics: tuple[NicPort, ...] = GT_NICS, **changes: object) -> HostNicIntent:
    """An 8-NIC Grand Teton host: RoCE DSCP 26 on lossless priority 3, CNP DSCP 48 on priority 6."""
    dscp = list(driver_default_dscp_to_priority())
    dscp[26], dscp[48] = 3, 6
    intent = HostNicIntent(
        host="gt00001",
        nics=nics,
        trust="dscp",
        dscp_to_priority=tuple(dscp),
        pfc_priorities=(3,),
        prio_tc=PRIO_TC,
        tc_tsa=TC_TSA,  # type: ignore[arg-type]
        tc_bandwidth=TC_BW,
        dcqcn=DcqcnIntent.from_names(
            True,
            (3,),
            rp={"rpg_time_reset": 300, "rpg_ai_rate": 10, "rpg_hai_rate": 100, "rpg_min_dec_fac": 50},
            np={"min_time_between_cnps": 4},
        )
        if dcqcn
        else DcqcnIntent(enabled=False, priorities=()),
        cnp_dscp=48,
        cnp_priority=6,
        cma_roce_mode=2,
        cma_roce_tos=106 if dcqcn else 104,
        traffic_class=106 if dcqcn else 104,
    )
    return replace(intent, **changes) if changes else intent


def firmware_intent(**changes: object) -> FirmwareIntent:
    intent = FirmwareIntent(
        profile="grand-teton",
        devices=tuple(FirmwareDevice(n.pci, (1,), (n.name,)) for n in GT_NICS),
        roce_cc_prio_mask=0b1000,
        cnp_dscp=48,
        cnp_802p_prio=6,
        cc_params=(("rp_ai_rate", 10),),
    )
    return replace(intent, **changes) if changes else intent


def fake_nics(nics: tuple[NicPort, ...] = GT_NICS) -> list[FakeNic]:
    return [FakeNic(n.name, n.netdev, n.pci, n.port) for n in nics]


def write_script(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


GT_MTUS = {n.netdev: 4200 for n in GT_NICS}


def nic_setup(path: Path, intent: HostNicIntent, mtus: dict[str, int] | None = None) -> Path:
    """The shared script at ``path`` and the intent's plan beside it (``path`` with ``.conf``), as installed."""
    path.with_suffix(".conf").write_text(render_nic_plan(intent, GT_MTUS if mtus is None else mtus))
    return write_script(path, render_nic_script())


def run(host: FakeHost, script: Path, *args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    """Run a script on the fake host; roce-nic.sh with its plan (the ``.conf`` beside it) when there is one."""
    plan = script.with_suffix(".conf")
    return host.run(script, *(("--plan", str(plan)) if plan.exists() else ()), *args, **kw)


@pytest.fixture
def gt_script(tmp_path: Path) -> Path:
    return nic_setup(tmp_path / "roce-nic.sh", grand_teton())


@pytest.fixture
def pfc_only_script(tmp_path: Path) -> Path:
    return nic_setup(tmp_path / "roce-nic-pfc.sh", grand_teton(dcqcn=False))


@pytest.fixture
def fw_script(tmp_path: Path) -> Path:
    return write_script(tmp_path / "nic-firmware.sh", render_firmware_script(firmware_intent()))


@pytest.fixture
def unprivileged() -> list[str]:
    """Prefix that makes file modes bind (the EPERM and lockdown emulation needs it)."""
    prefix = nicfake.unprivileged_prefix()
    if prefix is None:
        pytest.skip("cannot drop CAP_DAC_OVERRIDE here (no setpriv, or no CAP_SETPCAP)")
    return prefix


def changing(host: FakeHost) -> list[tuple[str, ...]]:
    return [(c["tool"], *c["argv"]) for c in host.changing_calls()]


def plant(path: Path, text: str) -> None:
    """Change a fake file behind the script's back, keeping its mode and old mtime."""
    mode = path.stat().st_mode
    path.chmod(0o644)
    path.write_text(text)
    path.chmod(mode)
    os.utime(path, (nicfake.OLD, nicfake.OLD))


def settle(host: FakeHost) -> None:
    """Between runs: the kernel's view of the writes, everything old, logs cleared."""
    host.kernelize()
    host.age()
    host.clear_calls()


# ---- static checks ---------------------------------------------------------------------

PLANS = {
    "dcqcn": lambda: render_nic_plan(grand_teton(), GT_MTUS),
    "pfc-only": lambda: render_nic_plan(grand_teton(dcqcn=False)),
    "minimal": lambda: render_nic_plan(
        grand_teton(cma_roce_mode=None, cma_roce_tos=None, traffic_class=None,
                    dcbx_os_controlled=False, disable_global_pause=False, trust="pcp")
    ),
}
RENDERINGS = {
    "shared": render_nic_script,
    "firmware": lambda: render_firmware_script(firmware_intent()),
    "firmware-full": lambda: render_firmware_script(
        firmware_intent(cnp_dscp_mode="FIXED_VALUE", qos_trust_state="TRUST_DSCP",
                        devices=(FirmwareDevice("0000:17:00.0", (1, 2), ("mlx5_0", "mlx5_1")),))
    ),
}


@pytest.mark.parametrize("name", sorted(RENDERINGS))
def test_rendered_scripts_parse(name: str, tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.sh", RENDERINGS[name]())
    assert script.read_text().startswith("#!/usr/bin/env bash\n")
    result = subprocess.run([nicfake.BASH, "-n", str(script)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("name", sorted(RENDERINGS))
def test_rendered_scripts_pass_shellcheck(name: str, tmp_path: Path) -> None:
    shellcheck = require_tool("shellcheck")
    script = write_script(tmp_path / "s.sh", RENDERINGS[name]())
    result = subprocess.run([shellcheck, "--shell=bash", str(script)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("name", sorted(PLANS))
def test_plan_files_pass_their_check_and_the_scripts_reader(name: str, tmp_path: Path) -> None:
    """Each plan is one the strict reader takes: a --dry-run on a host without NICs fails on the NICs only."""
    text = PLANS[name]()
    assert plan_problems("roce-nic.conf", text) == []
    assert text.splitlines()[2] == f"FORMAT={PLAN_FORMAT}"
    script = nic_setup(tmp_path / "roce-nic.sh", grand_teton())
    script.with_suffix(".conf").write_text(text)
    host = FakeHost(tmp_path / "fake", [], ofed=True)
    result = run(host, script, "--dry-run")
    assert result.returncode == 3, result.stdout + result.stderr
    assert result.stderr.count("no interface") == len(GT_NICS) and "roce-nic.sh:" not in result.stderr


def test_templates_type_no_plan_numbers() -> None:
    """DSCPs, priorities, ToS, masks and rates come from the intent, never from the template."""
    for name in ("roce-nic.sh.j2", "roce-nic.conf.j2", "nic-firmware.sh.j2"):
        text = (resource_dir("templates") / "mlx5" / name).read_text()
        code = re.sub(r"\{\{.*?\}\}", "", text)
        for number in ("26", "48", "104", "106", "255", "300", "1000", "7"):
            assert not re.search(rf"(?<![\w.-]){number}(?![\w.-])", code), f"{name} types {number}"


def test_values_come_from_the_intent() -> None:
    text = render_nic_plan(grand_teton(cnp_dscp=40, cnp_priority=5, traffic_class=98), {"ens1np0": 9000})
    # sorted by name (spec order means nothing), CNP last
    assert "\nCC=rp_ai_rate:10 rp_hai_rate:100 rp_min_dec_fac:50 rp_time_reset:300 np_min_time_between_cnps:4 " \
        "np_cnp_dscp:40 np_cnp_prio:5\n" in text
    assert "\nTRAFFIC_CLASS=98\n" in text and "\nCMA_ROCE_MODE=2\n" in text
    assert "\nNIC=mlx5_0 ens1np0 0000:17:00.0 1 0 9000\n" in text
    assert "\nNIC=mlx5_1 ens2np0 0000:27:00.0 1 1 -\n" in text  # no MTU planned: left alone
    assert "CABLE" not in text  # not settable with effect: see the script's header


def test_unsafe_values_never_reach_a_plan_or_run(tmp_path: Path) -> None:
    """Names are validated by the intent; a forged one is refused by the plan check and by the script."""
    nic = GT_NICS[0]
    object.__setattr__(nic := replace(nic), "netdev", "x'; touch pwned; echo '")
    intent = grand_teton(nics=(nic,))
    object.__setattr__(intent, "host", "h$(touch pwned2)")
    script = nic_setup(tmp_path / "s.sh", intent)
    problems = plan_problems("roce-nic.conf", script.with_suffix(".conf").read_text())
    assert [p.line for p in problems] == [4, 19]  # HOST= and the NIC line; a comment runs nothing
    host = FakeHost(tmp_path / "fake", [], ofed=True)
    result = subprocess.run([nicfake.BASH, str(script), "--check", "--root", str(host.root), "--plan",
                             str(script.with_suffix(".conf"))], cwd=tmp_path, capture_output=True, text=True,
                            env=host.env(), check=False)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "s.conf:4: HOST: bad value 'h$(touch pwned2)'" in result.stderr
    assert not (tmp_path / "pwned").exists() and not (tmp_path / "pwned2").exists()


def test_shell_quote() -> None:
    assert shell_quote("mlx5_0") == "mlx5_0"
    assert shell_quote(3) == "3"
    assert shell_quote("RoCE v2") == "'RoCE v2'"
    assert shell_quote("a'b") == "'a'\"'\"'b'"
    for bad in (None, True, 1.5, ["x"]):
        with pytest.raises(TypeError):
            shell_quote(bad)


def test_shared_environment_has_the_filter() -> None:
    from fabgen.targets.environment import environment

    env = environment()
    assert render_nic_script(env) == render_nic_script()
    assert render_nic_plan(grand_teton(), GT_MTUS, env) == render_nic_plan(grand_teton(), GT_MTUS)
    assert env.filters["shell_quote"] is shell_quote


# ---- the intent ---------------------------------------------------------------------

def test_cc_param_names_match_the_reference_table() -> None:
    """Every name in nic.md's parameter table maps to the same three names here."""
    text = require_reference("nic.md").read_text()
    section = text.split("### 1b.", 1)[1].split("### 1c.", 1)[0]
    rows = 0
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not re.fullmatch(r"(rp|np|rtt)_\w+", cells[0]):
            continue
        rows += 1
        param = CC_PARAMS[cells[0]]
        ofed = None if cells[1] == "—" else cells[1]
        assert param.ofed == ofed, cells
        nv = re.match(r"\(?([A-Z0-9_]+)", cells[2])
        if param.mlxconfig is not None:
            assert nv and nv.group(1) == param.mlxconfig, cells
    assert rows == len(CC_PARAMS)  # every parameter of the module is a row of the table
    assert cc_param("rpg_time_reset").debugfs == "rp_time_reset"
    assert cc_param("RPG_AI_RATE").debugfs == "rp_ai_rate"
    assert cc_param("roce_np/cnp_802p_prio").debugfs == "np_cnp_prio"
    assert cc_param("min_time_between_cnps").ofed == "roce_np/min_time_between_cnps"
    with pytest.raises(KeyError, match="unknown mlx5 DCQCN parameter"):
        cc_param("rpg_bogus")


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: DcqcnIntent(True, (3,), rp=(("rp_bogus", 1),)), "not an mlx5 cc_params name"),
        (lambda: DcqcnIntent(True, (3,), rp=(("np_min_time_between_cnps", 4),)), "is a np parameter"),
        (lambda: DcqcnIntent(True, (3,), np=(("np_cnp_dscp", 48),)), "comes from the CNP class"),
        (lambda: DcqcnIntent(True, (3,), np=(("np_cnp_prio_mode", 0),)), "no MLNX_OFED sysfs file"),
        (lambda: DcqcnIntent(True, (3,), rp=(("rp_threshold", 32),)), r"0\.\.31"),
        (lambda: DcqcnIntent(True, ()), "on no priority"),
        (lambda: DcqcnIntent(True, (3, 3)), "twice"),
        (lambda: grand_teton(tc_bandwidth=(50, 40, 0, 0, 0, 0, 0, 0)), "sum to 100"),
        (lambda: grand_teton(tc_bandwidth=(50, 40, 10, 0, 0, 0, 0, 0)), "non-ETS"),
        (lambda: grand_teton(dscp_to_priority=(0,) * 63), "64 entries"),
        (lambda: grand_teton(pfc_priorities=(8,)), r"0\.\.7"),
        (lambda: grand_teton(trust="both"), "dscp or pcp"),
        (lambda: grand_teton(cma_roce_mode=3), "1 or 2"),
        (lambda: grand_teton(nics=()), "no in-service"),
        (lambda: grand_teton(nics=(GT_NICS[0], GT_NICS[0])), "share a name"),
        (lambda: NicPort("mlx5_0", "eth0; reboot", "0000:17:00.0", 0), "not a Linux netdev"),
        (lambda: NicPort("mlx5_0", "eth0", "17:00.0", 0), "PCI address"),
        (lambda: NicPort("mlx5/../x", "eth0", "0000:17:00.0", 0), "not safe"),
        (lambda: firmware_intent(roce_cc_prio_mask=256), r"0\.\.255"),
        (lambda: firmware_intent(cc_params=(("rtt_resp_dscp_valid", 1),)), "no mlxconfig name"),
        (lambda: FirmwareDevice("0000:17:00.0", (3,)), r"1\.\.2"),
    ],
)
def test_intent_validation(build, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=message):
        build()


def test_intent_views() -> None:
    intent = grand_teton()
    assert intent.pfc_enabled == (0, 0, 0, 1, 0, 0, 0, 0)
    assert intent.ecn_enabled == (0, 0, 0, 1, 0, 0, 0, 0)
    assert [(s.debugfs, s.value) for s in intent.cc_settings][-2:] == [("np_cnp_dscp", 48), ("np_cnp_prio", 6)]
    assert intent.cma_roce_mode_name == "RoCE v2"
    off = grand_teton(dcqcn=False)
    assert off.ecn_enabled == (0,) * 8 and off.cc_settings == ()
    assert firmware_intent().device_settings(FirmwareDevice("0000:17:00.0", (2,)))[:2] == (
        ("ROCE_CC_PRIO_MASK_P2", "8"), ("ROCE_CC_ALGORITHM_P2", "ECN"))


# ---- roce-nic.sh on a fake host ----------------------------------------------------------

def expected_mlnx_qos_calls(netdev: str) -> list[tuple[str, ...]]:
    return [
        ("ethtool", "-A", netdev, "autoneg", "off", "rx", "off", "tx", "off"),
        ("mlnx_qos", "-i", netdev, "--dcbx", "os"),
        ("mlnx_qos", "-i", netdev, "--trust", "dscp"),
        ("mlnx_qos", "-i", netdev, "--pfc", PFC),
        ("mlnx_qos", "-i", netdev, "--prio_tc", "0,0,0,1,0,0,2,0", "--tsa", ",".join(TC_TSA),
         "--tcbw", "50,50,0,0,0,0,0,0"),
    ]


def test_ofed_mlnx_qos_first_run_second_run_check_and_dry_run(
    tmp_path: Path, gt_script: Path, unprivileged: list[str]
) -> None:
    host = FakeHost(tmp_path / "fake", fake_nics(), ofed=True, params_subdir={"ens8np0"})
    first = fake_nics()[0]
    plant(host.sys / "kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_mode", "IB/RoCE v1\n")
    # OFED answers EPERM to enabling an enabled priority: priority 3 is on (firmware
    # default mask 255), so any write to its enable files must fail.
    enabled = [host.ecn_dir(n) / side / "enable" / "3" for n in fake_nics() for side in ("roce_rp", "roce_np")]
    host.lock(enabled)
    control = subprocess.run([*unprivileged, nicfake.BASH, "-c", f"echo 1 > {enabled[0]}"], capture_output=True, check=False)
    assert control.returncode != 0, "the EPERM emulation does not hold"

    result = run(host, gt_script, prefix=unprivileged)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stderr == ""
    assert changing(host) == [call for n in GT_NICS for call in expected_mlnx_qos_calls(n.netdev)]
    expected: dict[str, str] = {"sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_mode": "RoCE v2\n"}
    for nic in GT_NICS:
        expected[f"sys/class/net/{nic.netdev}/mtu"] = "4200\n"
        ecn = f"sys/class/net/{nic.netdev}/ecn"
        params = f"{ecn}/roce_rp/params" if nic.netdev == "ens8np0" else f"{ecn}/roce_rp"
        expected[f"{params}/rpg_ai_rate"] = "10\n"
        expected[f"{params}/rpg_hai_rate"] = "100\n"
        for side in ("roce_rp", "roce_np"):
            for p in (0, 1, 2, 4, 5, 6, 7):
                expected[f"{ecn}/{side}/enable/{p}"] = "0\n"
        expected[f"sys/kernel/config/rdma_cm/{nic.name}/ports/1/default_roce_tos"] = "106\n"
        expected[f"sys/class/infiniband/{nic.name}/tc/1/traffic_class"] = "106\n"
    assert host.written() == expected  # debugfs untouched: OFED sysfs is preferred
    for nic in fake_nics():
        state = host.nic_state(nic)
        assert state["pause"] == {"autoneg": "off", "rx": "off", "tx": "off"}
        assert state["dcbx"] & nicfake.DCBX_HOST
        assert state["apps"] == {str(d): d >> 3 for d in range(64)}
        assert (state["pfc_en"], state["delay"], state["link_flaps"]) == (0b1000, 7, 1)  # cable length untouched
        assert (state["prio_tc"], state["tsa"], state["bw"]) == (list(PRIO_TC), list(TC_TSA), list(TC_BW))
    assert "mlx5_0 (ens1np0, rail 0): RDMA-CM default RoCE mode: IB/RoCE v1 -> RoCE v2" in result.stdout

    # Second run: every file read-only, so any write would fail; no tool may be asked to change.
    settle(host)
    host.lock_all()
    states = [host.nic_state(n) for n in fake_nics()]
    again = run(host, gt_script, prefix=unprivileged)
    assert again.returncode == 0, again.stdout + again.stderr
    assert changing(host) == [] and host.written() == {}
    assert [host.nic_state(n) for n in fake_nics()] == states
    assert again.stdout.strip().splitlines()[-1] == "gt00001: 0 change(s) made"

    check = run(host, gt_script, "--check", prefix=unprivileged)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "gt00001: NIC settings as planned" in check.stdout

    # Plant two differences: PFC off on one NIC, a DCQCN parameter on another.
    state = host.nic_state(first)
    host.save(f"nic-{fake_nics()[2].netdev}", {**host.nic_state(fake_nics()[2]), "pfc_en": 0})
    planted = host.ecn_dir(fake_nics()[5]) / "roce_rp" / "rpg_ai_rate"
    plant(planted, "5\n")
    host.clear_calls()
    states = [host.nic_state(n) for n in fake_nics()]
    for args in (("--check",), ("--dry-run",)):
        result = run(host, gt_script, *args, prefix=unprivileged)
        assert result.returncode == (1 if args == ("--check",) else 0), result.stdout + result.stderr
        assert changing(host) == [] and host.written() == {}
        assert [host.nic_state(n) for n in fake_nics()] == states
    check = run(host, gt_script, "--check", prefix=unprivileged)
    assert "mlx5_2 (ens3np0, rail 2): PFC by priority (a change flaps the link): is 0,0,0,0,0,0,0,0, planned " \
           f"{PFC}" in check.stdout
    assert "mlx5_5 (ens6np0, rail 5): DCQCN roce_rp/rpg_ai_rate: is 5, planned 10" in check.stdout
    assert "gt00001: 2 NIC setting(s) differ from the plan" in check.stdout
    dry = run(host, gt_script, "--dry-run", prefix=unprivileged)
    assert f"would run: mlnx_qos -i ens3np0 --pfc {PFC}" in dry.stdout
    assert f"would write 10 to {planted}" in dry.stdout

    # Apply fixes exactly the two differences.
    host.lock([planted], 0o644)
    host.clear_calls()
    fixed = run(host, gt_script, prefix=unprivileged)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert changing(host) == [("mlnx_qos", "-i", "ens3np0", "--pfc", PFC)]
    assert host.written() == {str(planted.relative_to(host.root)): "10\n"}
    assert host.nic_state(first) == state


def test_upstream_debugfs_with_dcb(tmp_path: Path, gt_script: Path) -> None:
    host = FakeHost(tmp_path / "fake", fake_nics(), ofed=False, tools=("dcb", "ethtool"))
    result = run(host, gt_script)
    assert result.returncode == 0, result.stdout + result.stderr
    dscp_map = tuple(f"{d}:{d >> 3}" for d in range(64))
    calls = []
    for nic in GT_NICS:
        n = nic.netdev
        calls += [
            ("ethtool", "-A", n, "autoneg", "off", "rx", "off", "tx", "off"),
            ("dcb", "dcbx", "set", "dev", n, "host", "cee", "ieee"),
            ("dcb", "app", "replace", "dev", n, "dscp-prio", *dscp_map),
            ("dcb", "pfc", "set", "dev", n, "prio-pfc", "0:off", "1:off", "2:off", "3:on", "4:off", "5:off", "6:off",
             "7:off"),
            ("dcb", "ets", "set", "dev", n, "tc-tsa", *(f"{i}:{t}" for i, t in enumerate(TC_TSA)),
             "tc-bw", *(f"{i}:{b}" for i, b in enumerate(TC_BW)), "prio-tc", *(f"{i}:{t}" for i, t in enumerate(PRIO_TC))),
        ]
    assert changing(host) == calls
    expected = {}
    for nic in GT_NICS:
        expected[f"sys/class/net/{nic.netdev}/mtu"] = "4200\n"
        expected[f"sys/kernel/debug/mlx5/{nic.pci}/cc_params/rp_ai_rate"] = "10\n"
        expected[f"sys/kernel/debug/mlx5/{nic.pci}/cc_params/rp_hai_rate"] = "100\n"
        expected[f"sys/kernel/config/rdma_cm/{nic.name}/ports/1/default_roce_tos"] = "106\n"
    assert host.written() == expected
    assert "firmware ROCE_CC_PRIO_MASK (nic-firmware.sh) selects the priorities" in result.stdout
    assert "global traffic class is an MLNX_OFED feature" in result.stdout
    for nic in fake_nics():
        state = host.nic_state(nic)
        assert state["dcbx"] == nicfake.DCBX_HOST | nicfake.DCBX_CEE | nicfake.DCBX_IEEE
        assert (state["pfc_en"], state["delay"], state["link_flaps"]) == (0b1000, 7, 1)

    settle(host)
    again = run(host, gt_script)
    assert again.returncode == 0, again.stdout + again.stderr
    assert changing(host) == [] and host.written() == {}
    assert run(host, gt_script, "--check").returncode == 0


@pytest.mark.parametrize("tool", ["mlnx_qos", "dcb"])
def test_only_differing_dscp_entries_are_set(tmp_path: Path, tool: str) -> None:
    """With trust already dscp and the driver's map, only the plan's exceptions are written."""
    dscp = list(driver_default_dscp_to_priority())
    dscp[34] = 3  # a second lossless class on priority 3 (DSCP 34 >> 3 would be 4)
    intent = grand_teton(nics=GT_NICS[:1], dscp_to_priority=tuple(dscp))
    script = nic_setup(tmp_path / "s.sh", intent)
    host = FakeHost(tmp_path / "fake", fake_nics(GT_NICS[:1]), ofed=True, tools=(tool, "ethtool"))
    nic = fake_nics(GT_NICS[:1])[0]
    host.save(f"nic-{nic.netdev}", {**host.nic_state(nic), "apps": {str(d): d >> 3 for d in range(64)}})
    result = run(host, script, "--qos-tool", tool)
    assert result.returncode == 0, result.stdout + result.stderr
    dscp_calls = [c for c in changing(host) if "--dscp2prio" in c or "dscp-prio" in c]
    if tool == "mlnx_qos":
        assert dscp_calls == [("mlnx_qos", "-i", "ens1np0", "--dscp2prio", "set,34,3")]
    else:
        assert dscp_calls == [("dcb", "app", "replace", "dev", "ens1np0", "dscp-prio", "34:3")]
    assert host.nic_state(nic)["apps"]["34"] == 3
    assert not any("--trust" in c for c in changing(host))
    settle(host)
    assert run(host, script, "--qos-tool", tool).returncode == 0
    assert changing(host) == []


def test_pfc_only_ofed_turns_ecn_off(tmp_path: Path, pfc_only_script: Path, unprivileged: list[str]) -> None:
    host = FakeHost(tmp_path / "fake", fake_nics(), ofed=True)
    # Parameters must stay untouched with DCQCN off: make them unwritable.
    host.lock(p for n in fake_nics() for p in (host.ecn_dir(n)).rglob("*") if p.is_file() and "enable" not in p.parts)
    result = run(host, pfc_only_script, prefix=unprivileged)
    assert result.returncode == 0, result.stdout + result.stderr
    written = host.written()
    enables = {k for k in written if "/enable/" in k}
    assert len(enables) == 8 * 2 * 8 and all(written[k] == "0\n" for k in enables)
    assert set(written) - enables == {
        *(f"sys/kernel/config/rdma_cm/{n.name}/ports/1/default_roce_tos" for n in GT_NICS),
        *(f"sys/class/infiniband/{n.name}/tc/1/traffic_class" for n in GT_NICS),
        *(f"sys/class/net/{n.netdev}/mtu" for n in GT_NICS),
    }
    assert written["sys/kernel/config/rdma_cm/mlx5_3/ports/1/default_roce_tos"] == "104\n"
    assert result.stdout.count("DCQCN off (PFC only): ECN reaction and notification points off") == 8
    assert [c for c in changing(host) if c[0] == "mlnx_qos" and "--pfc" in c] == [
        ("mlnx_qos", "-i", n.netdev, "--pfc", PFC) for n in GT_NICS]

    settle(host)
    host.lock_all()
    again = run(host, pfc_only_script, prefix=unprivileged)
    assert again.returncode == 0, again.stdout + again.stderr
    assert changing(host) == [] and host.written() == {}


def test_pfc_only_upstream_points_at_the_firmware_mask(tmp_path: Path, pfc_only_script: Path) -> None:
    host = FakeHost(tmp_path / "fake", fake_nics(), ofed=False, tools=("dcb", "ethtool"))
    result = run(host, pfc_only_script)
    assert result.returncode == 0, result.stdout + result.stderr
    assert not any("/cc_params/" in k for k in host.written())
    assert "ROCE_CC_PRIO_MASK (nic-firmware.sh) keeps reaction and notification off" in result.stdout


@pytest.mark.parametrize("mode", [(), ("--check",), ("--dry-run",)])
def test_locked_down_debugfs_fails_clearly(tmp_path: Path, mode: tuple[str, ...], unprivileged: list[str]) -> None:
    """Lockdown refuses even reading 0600 debugfs files; no OFED sysfs to fall back on."""
    nics = GT_NICS[:2]
    script = nic_setup(tmp_path / "s.sh", grand_teton(nics=nics))
    host = FakeHost(tmp_path / "fake", fake_nics(nics), ofed=False, lockdown="integrity")
    host.lock((p for n in fake_nics(nics) for p in host.debugfs_dir(n).iterdir()), 0o000)
    result = run(host, script, *mode, prefix=unprivileged)
    assert result.returncode == 3, result.stdout + result.stderr
    assert result.stderr.count("cannot set DCQCN parameters") == 2
    assert "kernel is in lockdown mode 'integrity', which refuses debugfs cc_params" in result.stderr
    assert "nic-firmware.sh" in result.stderr
    assert not any("/cc_params/" in k for k in host.written())


def test_missing_debugfs_and_unwritable_debugfs(tmp_path: Path, unprivileged: list[str]) -> None:
    nics = GT_NICS[:1]
    script = nic_setup(tmp_path / "s.sh", grand_teton(nics=nics))
    host = FakeHost(tmp_path / "absent", fake_nics(nics), ofed=False, debugfs=False)
    result = run(host, script, "--check")
    assert result.returncode == 3
    assert "does not exist (debugfs not mounted" in result.stderr
    # Readable but not writable (a VF, or a read-only mount): the write fails, loudly.
    host = FakeHost(tmp_path / "ro", fake_nics(nics), ofed=False)
    host.lock(host.debugfs_dir(fake_nics(nics)[0]).iterdir())
    result = run(host, script, prefix=unprivileged)
    assert result.returncode == 3
    assert re.search(r"DCQCN cc_params/rp_ai_rate: writing 10 to \S+ failed", result.stderr)


def test_usage_and_missing_tools(tmp_path: Path, gt_script: Path, fw_script: Path) -> None:
    host = FakeHost(tmp_path / "fake", [], ofed=False, tools=())
    for script in (gt_script, fw_script):
        for args in (("--dry-run", "--check"), ("--bogus",), ("--root",)):
            result = run(host, script, *args, root=False)
            assert result.returncode == 2, (script, args, result.stderr)
            assert "usage:" in result.stderr
    assert run(host, gt_script, "--qos-tool", "lldptool").returncode == 2
    result = run(host, gt_script)
    assert result.returncode == 3 and "neither mlnx_qos (mlnx-tools) nor dcb (iproute2)" in result.stderr
    result = run(host, fw_script, root=False)
    assert result.returncode == 3 and "mlxconfig (MFT) nor mstconfig (mstflint)" in result.stderr


# ---- nic-firmware.sh --------------------------------------------------------------------

def test_firmware_script_queries_first_and_flags_the_reset(tmp_path: Path, fw_script: Path) -> None:
    host = FakeHost(tmp_path / "fake", [], ofed=False, tools=("mlxconfig", "mstfwreset"))
    for nic in GT_NICS:
        host.add_nv_device(nic.pci)
    text = fw_script.read_text()
    assert "NOTHING SET HERE IS ACTIVE UNTIL A FIRMWARE RESET OR A REBOOT" in text

    result = run(host, fw_script, root=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert changing(host) == [
        ("mlxconfig", "-d", n.pci, "-y", "set", "ROCE_CC_PRIO_MASK_P1=8", "RPG_AI_RATE_P1=10", "DCBX_WILLING_P1=False")
        for n in GT_NICS
    ]
    assert all(c["argv"][2:4] == ["-e", "q"] for c in host.calls() if not c["writes"])
    assert "*** FIRMWARE RESET REQUIRED" in result.stdout
    assert "***   mstfwreset -d 0000:17:00.0 -y reset" in result.stdout
    nv = host.load("nv-0000:17:00.0")
    assert nv["ROCE_CC_PRIO_MASK_P1"]["next"] == 8 and nv["ROCE_CC_PRIO_MASK_P1"]["current"] == 255

    host.clear_calls()
    again = run(host, fw_script, root=False)
    assert again.returncode == 0 and changing(host) == []
    assert "FIRMWARE RESET REQUIRED" in again.stdout  # still pending: nothing reset yet
    check = run(host, fw_script, "--check", root=False)
    assert check.returncode == 1
    assert "ROCE_CC_PRIO_MASK_P1: set to 8 for the next boot; running firmware still has 255" in check.stdout

    host.nv_reset()
    check = run(host, fw_script, "--check", root=False)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "RESET" not in check.stdout

    nv = host.load("nv-0000:47:00.0")
    nv["CNP_DSCP_P1"]["next"] = 4
    host.save("nv-0000:47:00.0", nv)
    host.clear_calls()
    dry = run(host, fw_script, "--dry-run", root=False)
    assert dry.returncode == 0 and changing(host) == []
    assert "would run: mlxconfig -d 0000:47:00.0 -y set CNP_DSCP_P1=48" in dry.stdout
    check = run(host, fw_script, "--check", root=False)
    assert check.returncode == 1 and "CNP_DSCP_P1: next boot 4, planned 48" in check.stdout


def test_firmware_script_reports_unsupported_parameters(tmp_path: Path) -> None:
    script = write_script(tmp_path / "fw.sh", render_firmware_script(firmware_intent(
        devices=(FirmwareDevice(GT_NICS[0].pci, (1,), ("mlx5_0",)),), qos_trust_state="TRUST_DSCP")))
    host = FakeHost(tmp_path / "fake", [], ofed=False, tools=("mlxconfig",))
    host.add_nv_device(GT_NICS[0].pci)  # firmware without qos_trust_state_supported
    result = run(host, script, root=False)
    assert result.returncode == 3
    assert "doesn't support QOS_TRUST_STATE_P1" in result.stderr
    assert changing(host) == []


# ---- the plan file: read as data, refused when it is not what the script expects ---------

def _edit_plan(script: Path, edit: Any) -> None:
    plan = script.with_suffix(".conf")
    plan.write_text(edit(plan.read_text()))


@pytest.mark.parametrize(("edit", "message"), [
    (lambda t: t + "REBOOT=now\n", "unknown key REBOOT"),
    (lambda t: t.replace("HOST=gt00001", "HOST=$(touch pwned)"), "HOST: bad value '$(touch pwned)'"),
    (lambda t: t.replace("TRUST=dscp", "TRUST=dscp`touch pwned`"), "TRUST: bad value"),
    (lambda t: t.replace("CC=rp_ai_rate:10", "CC=rp_ai_rate:$(touch pwned)"), "CC: bad value"),
    (lambda t: t.replace("CC=rp_ai_rate:10", "CC=rp_bogus:10"), "unknown DCQCN parameter 'rp_bogus'"),
    (lambda t: t.replace("HOST=gt00001", "HOST=gt00001\nTRUST=pcp"), "TRUST given twice"),  # injected newline
    (lambda t: t.replace("HOST=gt00001", "HOST=gt00001\n$(touch pwned)"), "not a KEY=VALUE line"),
    (lambda t: t.replace("HOST=gt00001", "HOST=gt00001\r"), "not a KEY=VALUE line"),
    (lambda t: t.replace("ens1np0 0000:17:00.0", "ens1np0;touch${IFS}pwned 0000:17:00.0"), "bad value"),
    (lambda t: t.replace(" 0 4200\n", " 0 99999\n"), "NIC MTU: bad value '99999'"),
    (lambda t: t.replace("CMA_ROCE_TOS=106", "CMA_ROCE_TOS=256"), "CMA_ROCE_TOS: bad value '256'"),
    (lambda t: t.replace("PFC_EN=0 0 0 1 0 0 0 0", "PFC_EN=0 0 0 1"), "PFC_EN needs 8 values, has 4"),
    (lambda t: t.replace("DCQCN=on\n", ""), "DCQCN is missing"),
    (lambda t: t.replace(f"FORMAT={PLAN_FORMAT}", f"FORMAT={PLAN_FORMAT + 1}"),
     f"plan format '{PLAN_FORMAT + 1}', but this roce-nic.sh (fabgen "),
    (lambda t: t.replace(f"FORMAT={PLAN_FORMAT}\n", "") + f"FORMAT={PLAN_FORMAT}\n", "the first setting must be FORMAT="),
])
def test_a_plan_it_does_not_expect_is_refused(tmp_path: Path, gt_script: Path, edit: Any, message: str) -> None:
    """Nothing in the plan runs, and a plan the script does not fully understand changes nothing."""
    _edit_plan(gt_script, edit)
    host = FakeHost(tmp_path / "fake", fake_nics(), ofed=True)
    for mode in ((), ("--check",)):
        result = run(host, gt_script, *mode)
        assert result.returncode == 2, result.stdout + result.stderr
        assert message in result.stderr and "roce-nic.conf:" in result.stderr, result.stderr
        assert host.calls() == [] and host.written() == {}
    assert not list(tmp_path.rglob("pwned"))


@pytest.mark.parametrize("mode", [0o664, 0o646, 0o666])
def test_a_plan_others_may_write_is_refused(tmp_path: Path, gt_script: Path, mode: int) -> None:
    """Root must not take its NIC settings from a file someone else can change."""
    gt_script.with_suffix(".conf").chmod(mode)
    host = FakeHost(tmp_path / "fake", fake_nics(), ofed=True)
    result = run(host, gt_script, "--check")
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"writable by no one else (mode {mode:o})" in result.stderr
    assert host.calls() == []
    gt_script.with_suffix(".conf").chmod(0o600)
    assert run(host, gt_script, "--check").returncode == 1  # readable again: the host is simply not set up


def test_version_and_missing_plan(tmp_path: Path, gt_script: Path) -> None:
    host = FakeHost(tmp_path / "fake", fake_nics(), ofed=True)
    result = run(host, gt_script, "--version")
    assert result.returncode == 0 and result.stdout == f"roce-nic.sh fabgen {__version__}, plan format {PLAN_FORMAT}\n"
    result = host.run(gt_script, "--plan", str(tmp_path / "absent.conf"))
    assert result.returncode == 2 and "cannot read the plan file" in result.stderr


@pytest.mark.parametrize(("shown", "differs"), [
    ("Global tclass=106\n", False), ("Global tclass=106\ndst_ip=10.0.0.0/8,tclass=96\n", False),
    ("106\n", False), ("tclass=106\n", False), ("Global tclass=104\n", True), ("", True),
    ("dst_ip=10.0.0.0/8,tclass=106\n", True),  # a rule, not the global class
])
def test_traffic_class_read_back_formats(tmp_path: Path, shown: str, differs: bool) -> None:
    """OFED shows ``Global tclass=N`` (then its rules); an echo of what was written shows ``N``."""
    nics = GT_NICS[:1]
    script = nic_setup(tmp_path / "s.sh", grand_teton(nics=nics))
    host = FakeHost(tmp_path / "fake", fake_nics(nics), ofed=True)
    assert run(host, script).returncode == 0
    settle(host)
    plant(host.sys / "class/infiniband/mlx5_0/tc/1/traffic_class", shown)
    check = run(host, script, "--check")
    assert check.returncode == (1 if differs else 0), check.stdout + check.stderr
    assert ("global traffic class (OFED)" in check.stdout) == differs


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_every_example_plan_dry_runs_on_a_fake_host(name: str, tmp_path: Path) -> None:
    """One host per profile of each example: the generated pair reads, plans the MTU, and changes nothing in a dry run."""
    plan = plan_fabric(load_spec(example(name)))
    hosts = {h.profile: h for h in plan.hosts if h.nic_intent is not None}
    devices = [h.name for h in hosts.values()] + list(hosts)
    files = render_fabric(plan, targets=["nic-qos", "nic-qos-script"], devices=devices)
    assert hosts
    for profile, host in hosts.items():
        assert host.nic_intent is not None and host.network is not None
        (tmp_path / profile).mkdir()
        script = write_script(tmp_path / profile / "roce-nic.sh", files[nic_script_path(profile)])
        script.with_suffix(".conf").write_text(files[plan_path(host.name)])
        nics = [FakeNic(n.name, n.netdev, n.pci, n.port) for n in host.nic_intent.nics]
        fake = FakeHost(tmp_path / profile / "fake", nics, ofed=True)
        result = run(fake, script, "--dry-run")
        assert result.returncode == 0, result.stdout + result.stderr
        assert changing(fake) == [] and fake.written() == {}
        for nic in host.network.interfaces:
            assert f"interface MTU: 1500 -> {nic.mtu} (dry run: not changed)" in result.stdout


def test_firmware_script_sets_link_type_only_on_vpi_adapters(tmp_path: Path, fw_script: Path) -> None:
    host = FakeHost(tmp_path / "fake", [], ofed=False, tools=("mlxconfig",))
    vpi, eth = GT_NICS[0].pci, GT_NICS[1].pci
    for nic in GT_NICS:
        host.add_nv_device(nic.pci, {"LINK_TYPE": 1} if nic.pci == vpi else None)  # a VPI card booting as IB
    result = run(host, fw_script, root=False)
    assert result.returncode == 0, result.stdout + result.stderr
    sets = {c[2]: c[5:] for c in changing(host)}
    assert sets[vpi][-1] == "LINK_TYPE_P1=ETH" and not any("LINK_TYPE" in a for a in sets[eth])
    assert f"mlx5_1 ({eth}): no LINK_TYPE_P1 on this adapter (Ethernet only)" in result.stdout
    assert host.load(f"nv-{vpi}")["LINK_TYPE_P1"]["next"] == 2
    # Neither reset tool installed: say so, and what does the job instead.
    assert "***   reboot (neither mlxfwreset (MFT) nor mstfwreset (mstflint) is installed)" in result.stdout


@pytest.mark.parametrize("resets", [("mlxfwreset",), ("mstfwreset",), ("mlxfwreset", "mstfwreset")])
def test_firmware_script_names_the_installed_reset_tool(tmp_path: Path, fw_script: Path,
                                                        resets: tuple[str, ...]) -> None:
    """MFT's mlxfwreset when installed (it goes with mlxconfig), else mstflint's mstfwreset."""
    host = FakeHost(tmp_path / "fake", [], ofed=False, tools=("mlxconfig", *resets))
    for nic in GT_NICS:
        host.add_nv_device(nic.pci)
    result = run(host, fw_script, root=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"***   {resets[0]} -d {GT_NICS[0].pci} -y reset" in result.stdout


def test_firmware_query_parser_reads_ro_star_and_missing_columns(tmp_path: Path) -> None:
    """mlxconfig prints "*" and "RO" flags before a name, and only the columns the firmware reports."""
    script = write_script(tmp_path / "fw.sh", render_firmware_script(firmware_intent(
        devices=(FirmwareDevice(GT_NICS[0].pci, (1,), ("mlx5_0",)),))))
    pci = GT_NICS[0].pci
    host = FakeHost(tmp_path / "fake", [], ofed=False, tools=("mlxconfig",))
    host.add_nv_device(pci)
    nv = host.load(f"nv-{pci}")
    nv["CNP_DSCP_P1"]["ro"] = True  # read-only, and already as planned: fine
    nv["DCBX_IEEE_P1"] = {"default": 1, "current": 1, "next": 0}  # "*" on a parameter fabgen does not set
    host.save(f"nv-{pci}", nv)
    out = subprocess.run([str(host.bin / "mlxconfig"), "-d", pci, "-e", "q", "CNP_DSCP_P1", "DCBX_IEEE_P1"],
                         capture_output=True, text=True, env=host.env(), check=True).stdout
    assert re.search(r"^ RO     CNP_DSCP_P1 ", out, re.M) and re.search(r"^\*       DCBX_IEEE_P1 ", out, re.M)
    result = run(host, script, "--check", root=False)
    assert result.returncode == 1, result.stdout + result.stderr  # the mask and the others still differ
    assert "CNP_DSCP_P1" not in result.stdout + result.stderr

    # Read-only and not as planned: refused clearly, never attempted.
    nv["CNP_DSCP_P1"].update(current=4, next=4, default=4)
    host.save(f"nv-{pci}", nv)
    host.clear_calls()
    result = run(host, script, root=False)
    assert result.returncode == 3
    assert f"mlx5_0 ({pci}): CNP_DSCP_P1 is 4 and read-only (RO) on this adapter; planned 48" in result.stderr
    assert not any("CNP_DSCP_P1=48" in c["argv"] for c in host.changing_calls())

    # Firmware without Default/Current: only Next Boot to compare, a set still flags the reset.
    nv["CNP_DSCP_P1"] = {"default": 48, "current": 48, "next": 48}
    host.save(f"nv-{pci}", nv)
    host.save(f"nvcaps-{pci}", {"default": False, "current": False})
    out = subprocess.run([str(host.bin / "mlxconfig"), "-d", pci, "-e", "q", "CNP_DSCP_P1"],
                         capture_output=True, text=True, env=host.env(), check=True).stdout
    assert re.search(r"^Configurations: +Next Boot$", out, re.M)
    result = run(host, script, root=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ROCE_CC_PRIO_MASK_P1: next boot 255, planned 8" in result.stdout
    assert "FIRMWARE RESET REQUIRED" in result.stdout
    settle(host)
    again = run(host, script, "--check", root=False)
    assert again.returncode == 0, again.stdout + again.stderr  # nothing to tell "set" from "running" here
