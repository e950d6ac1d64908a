"""Refusals the fabric's sizes alone decide come before the planner builds a link.

A 2.4 KB spec (200k hosts, 2048-port EOS tiers) once took ``fabgen validate``
77 s and 6 GB to say that its ECMP width is above EOS's 600: the planner built
1.6 million links before the targets' limits looked at the plan. The ECMP
width and the address pools follow from the layout, so both are judged right
after sizing. Each test proves "before the links" by making the link builder
fail the test if it is called, and "the same refusal as before" by comparing
with the late path (the plan built, then its limits) on a spec small enough to
build.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fabgen.pipeline import load_spec, plan_fabric
from fabgen.plan import build
from fabgen.plan.routing import layout_ecmp_widths
from tests.helpers import EXAMPLE_NAMES, LARGE_EXAMPLES, edited, example, never_called, run_cli


def _tier(ports: int) -> dict[str, Any]:
    return {"os": "eos", "model": "X", "ports": ports, "speed": "400G"}


def _reviewer(count: int, rails: int) -> Callable[[dict[str, Any]], None]:
    """The reviewer's spec, from the lab: ``rails`` backend NICs a host, ``count`` hosts, three 2048-port tiers."""
    def edit(data: dict[str, Any]) -> None:
        profile = data["host_profiles"].pop("lab-node")
        del profile["pcie_switches"]
        profile["gpus"] = profile["gpus"][:1]
        profile["nics"] = [{"name": f"mlx5_{r}", "netdev": f"ens{r + 1}np0", "pci": f"0000:{0x40 + r:02x}:00.0",
                            "numa": 0, "rail": r, "speed": "400G"} for r in range(rails)]
        data["host_profiles"]["p"] = profile
        data["hosts"] = [{"profile": "p", "count": count, "name": "h{index:06d}"}]
        fabric = data["fabric"]
        fabric["rails"] = rails
        fabric["tiers"] = {"leaf": _tier(2048), "spine": _tier(2048), "super_spine": _tier(2048)}
        fabric["addressing"] = {"p2p": "10.0.0.0/8", "loopbacks": "172.16.0.0/16"}
    return edit


def _wide_lab(data: dict[str, Any]) -> None:
    """The lab with 700 hosts on 2048-port EOS leaves: 700 uplinks a leaf, past EOS's 600, in 5,600 links."""
    group = data["hosts"][0]
    group.update(count=700, name="lab{index:03d}")
    del group["overrides"]
    fabric = data["fabric"]
    fabric["tiers"] = {"leaf": _tier(2048), "spine": _tier(2048)}
    fabric["addressing"] = {"p2p": "10.0.0.0/12", "loopbacks": "10.255.0.0/24"}


def _fixed_paths(paths: int) -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        data["fabric"]["routing"] = {"maximum_paths": paths}
    return edit


def _small_p2p(data: dict[str, Any]) -> None:
    data["fabric"]["addressing"]["p2p"] = "10.10.0.0/25"  # the lab's leaves need 4 x 32 /31s, a /24


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    return path


def _validate_without_links(monkeypatch: pytest.MonkeyPatch, path: Path) -> tuple[int, str]:
    """``fabgen validate``'s exit code and stderr, failing the test if the planner starts on the links."""
    with monkeypatch.context() as patch:
        patch.setattr(build, "_layout_links", never_called("the link builder (_layout_links)"))
        code, _, err = run_cli("validate", str(path))
    return code, err


def _validate_late(monkeypatch: pytest.MonkeyPatch, path: Path) -> tuple[int, str]:
    """What ``fabgen validate`` said before the early refusals: the whole plan built, then the targets' limits."""
    with monkeypatch.context() as patch:
        patch.setattr(build, "_refuse_by_size", lambda *args: None)
        code, _, err = run_cli("validate", str(path))
    return code, err


def _line_of(text: str, key: str) -> int:
    """1-based line of the first ``key:`` in ``text``."""
    return next(n for n, line in enumerate(text.splitlines(), 1) if line.strip().startswith(f"{key}:"))


_P2P_TOO_SMALL = ("the p2p pool 10.0.0.0/8 has 16777216 usable addresses, but the layout needs 67108864: leaves "
                  "6272 (block of 8192 x 4096 addresses), spines 6468 (block of 8192 x 4096 addresses); every tier "
                  "gets a power-of-two block so that it can grow in place (at fabric.addressing.p2p)")


@pytest.mark.parametrize(("rails", "key", "offset", "message"), [
    # 8 rails: the ECMP width, at the tiers' mapping (the line after ``tiers:``), as before
    (8, "tiers", 1, "maximum-paths 1026 is above EOS's 600 (maximum-paths ... ecmp ...) (at fabric.tiers)"),
    # 32 rails: the p2p pool, refused before the width
    (32, "p2p", 0, _P2P_TOO_SMALL),
])
def test_reviewer_spec_refused_before_any_link(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, rails: int,
                                               key: str, offset: int, message: str) -> None:
    text = edited(_reviewer(200_000, rails))
    path = _write(tmp_path, text)
    code, err = _validate_without_links(monkeypatch, path)
    assert code == 2
    (line,) = err.splitlines()
    assert line.startswith(f"{path}:{_line_of(text, key) + offset}:") and line.endswith(f": {message}"), line


@pytest.mark.parametrize(("name", "edit", "says"), [
    ("lab", _wide_lab, "maximum-paths 700 is above EOS's 600"),
    ("lab", _fixed_paths(700), "maximum-paths 700 is above EOS's 600"),
    ("sonic-pod", _fixed_paths(300), "maximum-paths 300 is above SONiC's 256"),
    ("cumulus-pod", _fixed_paths(200), "maximum-paths 200 is above NVUE's 128"),
    ("lab", _small_p2p, "the p2p pool 10.10.0.0/25 has 128 usable addresses"),
], ids=["eos-derived", "eos-fixed", "sonic-fixed", "cumulus-fixed", "p2p-pool"])
def test_early_refusal_says_what_the_built_plan_said(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str,
                                                     edit: Callable[[dict[str, Any]], None], says: str) -> None:
    path = _write(tmp_path, edited(edit, name))
    early = _validate_without_links(monkeypatch, path)
    assert early == _validate_late(monkeypatch, path)
    code, err = early
    assert code == 2 and len(err.splitlines()) == 1 and says in err, err


def test_generate_refuses_before_any_link_too(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = _write(tmp_path, edited(_wide_lab))
    with monkeypatch.context() as patch:
        patch.setattr(build, "_layout_links", never_called("the link builder (_layout_links)"))
        code, _, err = run_cli("generate", str(path), "-o", str(tmp_path / "out"))
    assert code == 2 and "maximum-paths 700 is above EOS's 600" in err
    assert not (tmp_path / "out").exists()


def _three_tier_lab(data: dict[str, Any]) -> None:
    """The lab on 8-port switches: 3 tiers, with parallel leaf-spine and spine-super-spine links."""
    group = data["hosts"][0]
    group.update(count=12, name="lab{index:02d}")
    fabric = data["fabric"]
    fabric["tiers"] = {"leaf": {**_tier(8), "model": "7060DX5-32"}, "spine": {**_tier(8), "model": "7060DX5-32"},
                       "super_spine": {**_tier(8), "model": "7060DX5-32"}}
    fabric["addressing"] = {"p2p": "10.10.0.0/20", "loopbacks": "10.255.0.0/24", "mgmt": "192.0.2.0/24"}


@pytest.mark.parametrize("case", [*sorted(set(EXAMPLE_NAMES) - LARGE_EXAMPLES), "lab-3-tier", "lab-wide"])
def test_layout_widths_are_the_planned_widths(case: str) -> None:
    """The early rule gives each tier exactly the ``maximum-paths`` the planned switches get."""
    spec = load_spec(edited(_three_tier_lab) if case == "lab-3-tier"
                     else edited(lambda d: (_wide_lab(d), _fixed_paths(500)(d))) if case == "lab-wide"
                     else example(case))
    fabric = plan_fabric(spec)
    planned: dict[str, set[int]] = {}
    for switch in fabric.switches:
        assert switch.bgp is not None
        planned.setdefault(switch.tier, set()).add(switch.bgp.maximum_paths)
    assert {tier: {width} for tier, width in layout_ecmp_widths(spec, fabric.layout).items()} == planned
    if case == "lab-3-tier":
        assert fabric.layout.tiers == 3 and len(planned) == 3


@pytest.mark.parametrize(("routing", "cabling", "verdict"), [
    ({"exclude": ["spine-01"]}, False, False),
    ({"asn_overrides": [{"match": "spine-01", "asn": 4200000001}]}, False, False),
    ({}, True, False),
    ({"maximum_paths": 8}, True, True),
    ({"maximum_paths": 8, "exclude": ["spine-01"]}, False, False),
    ({"enabled": False}, False, False),
], ids=["exclude", "asn-override", "cabling", "fixed-with-cabling", "fixed-with-exclude", "routing-off"])
def test_no_early_verdict_where_the_plan_can_differ(routing: dict[str, Any], cabling: bool, verdict: bool) -> None:
    """Exclusions drop sessions, cables replace links, overrides merge peer groups: the built plan decides."""
    def edit(data: dict[str, Any]) -> None:
        data["fabric"]["routing"] = routing
        if cabling:
            data["fabric"]["cabling"] = [{"a": "lab01:ens1np0", "b": "leaf-r0-p00-01:Ethernet1/1"}]
    spec = load_spec(edited(edit))
    layout = plan_fabric(spec).layout
    assert bool(layout_ecmp_widths(spec, layout)) == verdict


@pytest.mark.parametrize("name", ["lab", "sonic-pod", "cumulus-pod"])
def test_examples_still_validate(name: str) -> None:
    code, out, err = run_cli("validate", str(example(name)))
    assert (code, err) == (0, "") and out.endswith(": ok\n")
