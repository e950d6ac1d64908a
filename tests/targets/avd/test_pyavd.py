"""fabgen's EOS output against Arista AVD itself (pyavd): schema and templates.

For every EOS switch of the lab, a sample of every tier of the 24k example and
a spec that turns every routing and load-balancing feature on, the ``avd``
target's structured config (read back from the YAML file it writes) must pass
``pyavd.validate_structured_config`` with no violation and no deprecation, and
``pyavd.get_device_config`` must render exactly fabgen's ``.cfg`` lines for
every section fabgen owns. AVD orders top-level sections its own way and sorts
some flat lists (``qos map dscp``), so blocks are compared as blocks (header
and children, children in order) and flat top-level lines as a set; fabgen's
``! note`` comments have no AVD key and are left out on both sides.

This proves two things at once: the ``.cfg`` is in the form AVD renders (issue
12: every ``router bgp`` line as pyavd writes it) and the AVD export says the
same as the ``.cfg`` (issue 16).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from helpers import dump, example, spec_data
from ruamel.yaml import YAML

from fabgen import pipeline
from fabgen.plan import FabricPlan, Switch
from fabgen.targets.avd.target import check_avd

pyavd = pytest.importorskip("pyavd")


def sections(text: str) -> tuple[dict[str, list[str]], set[str]]:
    """Top-level blocks (header -> child lines, in order) and flat top-level lines of an EOS config."""
    blocks: dict[str, list[str]] = {}
    flat: set[str] = set()
    header: str | None = None
    for line in text.splitlines():
        body = line.strip()
        if body == "end" or body == "!" or body.startswith("! "):
            if not line.startswith(" "):
                header = None
            continue
        if not line.startswith(" "):
            header = line
            blocks.setdefault(line, [])
            continue
        assert header is not None, f"indented line outside a block: {line!r}"
        blocks[header].append(line)
    for key in [k for k, children in blocks.items() if not children]:
        flat.add(key)
        del blocks[key]
    return blocks, flat


AVD_FOUR_SPACES = "platform trident mmu queue profile "
"""AVD 6.4.0's ``platform`` template indents this block by four spaces; EOS (and fabgen) by three.
The comparison re-indents AVD's children of this block only, one level; their words must still match."""


def avd_render(structured: dict[str, Any]) -> str:
    result = pyavd.validate_structured_config(structured)
    violations = [f"{'.'.join(map(str, v.path))}: {v.message}" for v in result.validation_result.violations]
    deprecations = [str(d) for d in result.validation_result.deprecations]
    assert not violations, violations
    assert not deprecations, deprecations
    text: str = pyavd.get_device_config(result.validated_data)
    return text


def rendered(plan: FabricPlan, names: list[str]) -> dict[str, str]:
    files = pipeline.render_fabric(plan, ["eos", "avd"], names)
    for path, text in files.items():
        if path.endswith(".avd.yaml"):
            assert check_avd(path, text) == []
    return files


def assert_same_as_avd(files: dict[str, str], name: str) -> None:
    structured = YAML(typ="safe").load(files[f"switches/{name}.avd.yaml"])
    ours_blocks, ours_flat = sections(files[f"switches/{name}.cfg"])
    avd_blocks, avd_flat = sections(avd_render(structured))
    assert ours_flat == avd_flat, (sorted(ours_flat ^ avd_flat), name)
    assert ours_blocks.keys() == avd_blocks.keys(), (sorted(ours_blocks.keys() ^ avd_blocks.keys()), name)
    for header, children in ours_blocks.items():
        theirs = avd_blocks[header]
        if header.startswith(AVD_FOUR_SPACES):
            theirs = [re.sub(r"^    ", "   ", line) for line in theirs]
        assert children == theirs, (name, header)


def sample(plan: FabricPlan, per_tier: int) -> list[str]:
    """The first and last ``per_tier`` switches of each tier (first pod and plane, last pod and plane)."""
    by_tier: dict[str, list[Switch]] = {}
    for switch in plan.switches:
        by_tier.setdefault(switch.tier, []).append(switch)
    names: list[str] = []
    for group in by_tier.values():
        names += [s.name for s in group[:per_tier] + group[-per_tier:]]
    return sorted(set(names))


def test_lab_every_switch_renders_as_avd_renders_it() -> None:
    plan = pipeline.plan_fabric(pipeline.load_spec(example("lab")))
    names = [s.name for s in plan.switches if s.os == "eos"]
    files = rendered(plan, names)
    for name in names:
        assert_same_as_avd(files, name)
    # what makes the comparison worth having: routing and the shut port are in both
    leaf = files["switches/leaf-r3-p00-01.cfg"]
    assert "router bgp " in leaf and "\n   shutdown\n" in leaf
    assert "platform trident mmu queue profile FABGEN-HEADROOM\n   ingress headroom bytes " in leaf  # Tomahawk 4


def test_llama3_24k_sample_of_every_tier() -> None:
    plan = pipeline.plan_fabric(pipeline.load_spec(example("llama3-24k")))
    names = sample(plan, 2)
    assert {s.tier for s in plan.switches if s.name in names} == {"leaf", "spine", "super_spine"}
    files = rendered(plan, names)
    for name in names:
        assert_same_as_avd(files, name)


def everything_on(variant: str) -> str:
    """The lab with every routing and load-balancing line fabgen can write on EOS.

    ``dlb``: DLB on the 7060DX5 (Tomahawk 4) leaves and spines; ``sand``:
    Jericho2 chassis spines with RoCE QP hashing. Both with multipath relax (the
    ``unique`` scheme), BFD and timers.
    """
    data = spec_data("lab")
    fabric = data["fabric"]
    if variant == "dlb":
        fabric["load_balancing"] = {"mode": "dlb", "roce_qp_hash": False}
    else:
        fabric["tiers"]["spine"]["model"] = "7804R3"  # Jericho2 chassis: sand profile, Management0
        fabric["load_balancing"] = {"mode": "ecmp", "roce_qp_hash": True}
    fabric["routing"] = {"asn_scheme": "unique", "bfd": {"interval": "250ms", "multiplier": 4},
                         "timers": {"keepalive": 5, "hold": 15}}
    return dump(data)


@pytest.mark.parametrize("variant", ["dlb", "sand"])
def test_every_feature_on_renders_as_avd_renders_it(variant: str) -> None:
    plan = pipeline.plan_fabric(pipeline.load_spec(everything_on(variant)))
    names = [s.name for s in plan.switches]
    files = rendered(plan, names)
    for name in names:
        assert_same_as_avd(files, name)
    leaf, spine = files["switches/leaf-r0-p00-01.cfg"].splitlines(), files["switches/spine-01.cfg"].splitlines()
    assert "   timers bgp 5 15" in leaf
    assert "   bgp bestpath as-path multipath-relax" in leaf  # unique: the uplinks lead to two peer ASNs
    assert any(re.fullmatch(r"   neighbor \S+ bfd interval 250 min-rx 250 multiplier 4", line) for line in leaf)
    dlb = "ip hardware fib load-balance distribution dynamic"
    if variant == "dlb":
        assert dlb in leaf and dlb in spine
    else:
        assert dlb not in spine and "   load-balance sand profile default" in spine
        assert "interface Management0" in spine
        assert "   load-balance sand profile default" not in leaf  # a Tomahawk leaf has no sand profile
        assert not any(line.startswith("platform trident") for line in spine)  # Jericho: EOS's own headroom
        assert any(line.startswith("platform trident mmu queue profile ") for line in leaf)


def test_the_comparison_catches_a_difference() -> None:
    """A line AVD would not render (or renders otherwise) must fail the comparison: the test is not vacuous."""
    plan = pipeline.plan_fabric(pipeline.load_spec(example("lab")))
    files = rendered(plan, ["spine-01"])
    cfg = files["switches/spine-01.cfg"]
    broken = dict(files)
    broken["switches/spine-01.cfg"] = cfg.replace("   no bgp default ipv4-unicast\n", "")
    with pytest.raises(AssertionError):
        assert_same_as_avd(broken, "spine-01")
    broken["switches/spine-01.cfg"] = re.sub(r"maximum-paths (\d+) ecmp \d+", r"maximum-paths \1", cfg)
    with pytest.raises(AssertionError):
        assert_same_as_avd(broken, "spine-01")
    broken["switches/spine-01.cfg"] = re.sub(r"ingress headroom bytes (\d+)", lambda m: f"ingress headroom bytes {int(m[1]) + 1}", cfg)
    with pytest.raises(AssertionError):  # the re-indented platform block is still compared word for word
        assert_same_as_avd(broken, "spine-01")
