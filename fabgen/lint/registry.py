"""The table of lint rules: one row per rule, in code order.

Each rule is a function in one of the family modules under
:mod:`fabgen.lint.rules`; its code and slug are stable once released, its
default severity can be changed per project. The documentation of a rule is
its docstring, in fixed sections (What it checks / Why it matters / Example /
Fix) that ``fabgen explain`` prints and a test requires.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property

from fabgen.lint.context import LintContext
from fabgen.lint.finding import Hit, Severity
from fabgen.lint.rules import (
    boot_drift,
    capacity,
    drift,
    host_drift,
    nccl,
    nccl_fabric,
    nic_drift,
    rails,
    routing,
    routing_drift,
    sysctl_drift,
    topo_drift,
    traffic,
    wiring,
)

SECTIONS = ("What it checks", "Why it matters", "Example", "Fix")
"""Documentation sections every rule has, in this order."""

FAMILIES: dict[str, str] = {
    "FG1": "traffic classes",
    "FG2": "rails",
    "FG25": "observed wiring (--wiring)",
    "FG3": "capacity",
    "FG4": "NCCL",
    "FG5": "deployed drift (--deployed)",
    "FG6": "routing",
}

Check = Callable[[LintContext], Iterator[Hit]]


@dataclass(frozen=True)
class Rule:
    code: str
    slug: str
    severity: Severity
    check: Check

    @property
    def summary(self) -> str:
        """First line of the docstring: what ``fabgen rules`` prints."""
        return self.docs["summary"]

    @property
    def family(self) -> str:
        for prefix in sorted(FAMILIES, key=len, reverse=True):
            if self.code.startswith(prefix):
                return FAMILIES[prefix]
        return ""

    @cached_property
    def docs(self) -> dict[str, str]:
        """``summary`` plus one entry per section of :data:`SECTIONS` found in the docstring."""
        return parse_docs(self.check.__doc__ or "")


def parse_docs(docstring: str) -> dict[str, str]:
    text = inspect.cleandoc(docstring)
    first, _, rest = text.partition("\n")
    out = {"summary": first.strip()}
    heading = re.compile(rf"^({'|'.join(SECTIONS)}):\s*$", re.MULTILINE)
    marks = list(heading.finditer(rest))
    for index, mark in enumerate(marks):
        end = marks[index + 1].start() if index + 1 < len(marks) else len(rest)
        body = rest[mark.end():end]
        out[mark.group(1)] = inspect.cleandoc(body).strip() if body.strip() else ""
    return out


RULES: tuple[Rule, ...] = (
    Rule("FG101", "roce-dscp-not-lossless", "error", traffic.roce_dscp_not_lossless),
    Rule("FG102", "nccl-tc-mismatch", "error", traffic.nccl_tc_mismatch),
    Rule("FG103", "nccl-tc-differs-between-hosts", "error", traffic.nccl_tc_differs),
    Rule("FG104", "nic-trust-mismatch", "error", traffic.nic_trust_mismatch),
    Rule("FG105", "nic-pfc-mismatch", "error", traffic.nic_pfc_mismatch),
    Rule("FG106", "cnp-class-mismatch", "error", traffic.cnp_class_mismatch),
    Rule("FG107", "cnp-not-strict", "warning", traffic.cnp_not_strict),
    Rule("FG108", "cnp-lossless", "error", traffic.cnp_lossless),
    Rule("FG109", "lossless-without-ecn", "error", traffic.lossless_without_ecn),
    Rule("FG110", "ecn-without-dcqcn", "warning", traffic.ecn_without_dcqcn),
    Rule("FG111", "ecn-thresholds-invalid", "error", traffic.ecn_thresholds),
    Rule("FG112", "dscp-in-two-classes", "error", traffic.dscp_in_two_classes),
    Rule("FG113", "too-many-lossless-priorities", "warning", traffic.too_many_lossless),
    Rule("FG114", "pfc-watchdog-disabled", "warning", traffic.pfc_watchdog_disabled),
    # FG115 (pfc-watchdog-out-of-range) retired: each OS's limits refuse such timers at validation.
    Rule("FG116", "mtu-too-small", "error", traffic.mtu_too_small),
    Rule("FG117", "switch-override-unused", "warning", traffic.switch_override_unused),
    Rule("FG118", "nic-headroom-cable-too-long", "warning", traffic.nic_headroom_cable),
    Rule("FG201", "rail-crossing", "error", rails.rail_crossing),
    Rule("FG202", "port-double-cabled", "error", rails.port_double_cabled),
    Rule("FG203", "port-beyond-radix", "error", rails.port_beyond_radix),
    Rule("FG204", "host-missing-rail", "error", rails.host_missing_rail),
    Rule("FG205", "hca-names-unusable-nic", "error", rails.hca_names_unusable_nic),
    Rule("FG206", "nic-gpu-locality", "warning", rails.nic_gpu_locality),
    Rule("FG207", "hca-rail-mismatch", "error", rails.hca_rail_mismatch),
    Rule("FG208", "hca-rail-order", "warning", rails.hca_rail_order),
    Rule("FG209", "heterogeneous-hosts", "warning", rails.heterogeneous_hosts),
    Rule("FG210", "uneven-uplinks", "warning", rails.uneven_uplinks),
    Rule("FG211", "link-speed-mismatch", "warning", rails.link_speed_mismatch),
    Rule("FG251", "wiring-swapped-cables", "error", wiring.swapped_cables),
    Rule("FG252", "wiring-missing-link", "error", wiring.missing_link),
    Rule("FG253", "wiring-unexpected-neighbour", "error", wiring.unexpected_neighbour),
    Rule("FG254", "wiring-rail-crossing", "error", wiring.rail_crossing_observed),
    Rule("FG301", "oversubscription-exceeded", "error", capacity.oversubscription_exceeded),
    Rule("FG302", "radix-exceeded", "error", capacity.radix_exceeded),
    Rule("FG303", "top-tier-too-small", "error", capacity.top_tier_too_small),
    Rule("FG401", "nccl-unknown-variable", "error", nccl.unknown_variable),
    Rule("FG402", "nccl-invalid-value", "error", nccl.invalid_value),
    Rule("FG403", "nccl-octal-value", "error", nccl.octal_value),
    Rule("FG404", "nccl-gid-index-set", "warning", nccl.gid_index_set),
    Rule("FG405", "adaptive-routing-unsupported", "warning", nccl.adaptive_routing_unsupported),
    Rule("FG406", "spray-without-adaptive-routing", "warning", nccl.spray_without_adaptive_routing),
    Rule("FG407", "nccl-suspicious-value", "warning", nccl.suspicious_value),
    Rule("FG408", "cross-nic-on-rail-fabric", "warning", nccl.cross_nic_on_rail_fabric),
    Rule("FG409", "fifo-tc-without-control-queue", "warning", nccl_fabric.fifo_tc_without_control_queue),
    Rule("FG410", "control-class-unused", "warning", nccl_fabric.control_class_unused),
    Rule("FG411", "qp-hash-single-qp", "warning", nccl_fabric.qp_hash_single_qp),
    Rule("FG501", "deployed-switch-qos-drift", "error", drift.switch_qos_drift),
    Rule("FG502", "deployed-nccl-env-drift", "error", drift.nccl_env_drift),
    Rule("FG503", "deployed-incomplete", "warning", drift.deployed_incomplete),
    Rule("FG504", "deployed-unreadable", "error", drift.deployed_unreadable),
    Rule("FG505", "deployed-switch-routing-drift", "error", routing_drift.switch_routing_drift),
    Rule("FG506", "deployed-host-network-drift", "error", host_drift.host_network_drift),
    Rule("FG507", "deployed-nic-plan-drift", "error", nic_drift.nic_plan_drift),
    Rule("FG508", "deployed-host-sysctl-drift", "error", sysctl_drift.sysctl_drift),
    Rule("FG509", "deployed-nccl-topo-drift", "error", topo_drift.topo_drift),
    Rule("FG510", "deployed-host-boot-drift", "error", boot_drift.boot_drift),
    Rule("FG601", "asn-collision", "error", routing.asn_collision),
    Rule("FG602", "bgp-neighbor-missing", "warning", routing.neighbor_missing),
    Rule("FG603", "maximum-paths-below-uplinks", "error", routing.maximum_paths_below_uplinks),
)
"""Every rule, in code order. A new rule is one function in a family module and one row here."""

_BY_KEY: dict[str, Rule] = {**{r.code: r for r in RULES}, **{r.slug: r for r in RULES}}


def get_rule(name: str) -> Rule | None:
    """A rule by code (``FG101``, any case) or slug (``roce-dscp-not-lossless``)."""
    return _BY_KEY.get(name.strip().upper()) or _BY_KEY.get(name.strip().lower())


def suggest(name: str) -> str | None:
    """The closest code or slug to ``name``, for did-you-mean messages.

    Codes are compared with codes (after reading O as 0 and I or L as 1, the usual
    typos), slugs with slugs: difflib alone finds "FG211" closer to "FG1O1" than "FG101".
    """
    import difflib

    text = name.strip()
    if text.upper().startswith("FG"):
        fixed = text.upper().translate(str.maketrans("OIL", "011", ""))
        fixed = "FG" + fixed[2:]
        if fixed in _BY_KEY:
            return fixed
        candidates = [r.code for r in RULES]
        text = fixed
    else:
        candidates = [r.slug for r in RULES]
        text = text.lower()
    close = difflib.get_close_matches(text, candidates, n=1, cutoff=0.6)
    return close[0] if close else None
