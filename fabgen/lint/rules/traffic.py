"""FG1xx traffic classes: switches, NICs and NCCL must agree on where RoCE and CNPs go.

A RoCE fabric is lossless only if the same DSCP lands on a PFC no-drop
priority on every switch, the NICs trust DSCP and pause the same priorities,
NCCL marks its packets with that DSCP, and congestion notifications travel in
their own strict, lossy queue. Each rule here checks one link of that chain,
per group of switches that share a policy (``qos`` or a ``switch_overrides``
entry), so a fabric of 2,048 switches costs a handful of comparisons.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from fabgen.lint.context import LintContext, MemoKey, QosGroup, hosts_phrase, plural, preview
from fabgen.lint.finding import Hit
from fabgen.plan.nic_intent import MLX5_AUTO_BUFFER_CABLE_M
from fabgen.source import DataPath

TC_VARIABLES = ("NCCL_IB_TC", "NCCL_IB_FIFO_TC", "NCCL_GIN_IB_TC")
"""NCCL variables that carry the IP TOS byte of some of NCCL's queue pairs."""

MLX5_DEFAULT_CNP = (48, 6)
"""DSCP and 802.1p priority of the CNPs a ConnectX NIC sends when nothing is set (nic.md, Q-obs)."""

ROCE_HEADERS_IPV4 = 20 + 8 + 12 + 16 + 4
"""IPv4 + UDP + BTH + RETH + ICRC: what an RDMA WRITE packet adds to its payload (the largest case)."""

_ECN_NAMES = {0: "00 (Not-ECT)", 1: "01 (ECT(1))", 2: "10 (ECT(0))", 3: "11 (CE)"}

ASIC_BUFFER_BYTES: dict[str, int] = {
    "tomahawk2": 42 * 10**6,
    "tomahawk3": 64 * 10**6,
    "tomahawk4": 113 * 10**6,
    "tomahawk5": 165 * 10**6,
    "spectrum2": 42 * 10**6,
    "spectrum3": 64 * 10**6,
    "spectrum4": 160 * 10**6,
}
"""Whole on-chip packet buffer of shallow-buffer ASICs, shared by every queue (vendor
figures, rounded down). No queue can grow beyond it, so an ECN threshold above it never
marks. Deep-buffer ASICs (Jericho) are absent on purpose."""
_ASIC_ALIASES = {"th2": "tomahawk2", "th3": "tomahawk3", "th4": "tomahawk4", "th5": "tomahawk5",
                 "spc2": "spectrum2", "spc3": "spectrum3", "spc4": "spectrum4"}


def asic_buffer(asic: str | None) -> int | None:
    """Packet buffer of a known shallow-buffer ASIC (``th4``, ``Tomahawk-4``, ``spectrum4``), else None."""
    if not asic:
        return None
    key = asic.lower().replace("-", "").replace("_", "")
    return ASIC_BUFFER_BYTES.get(_ASIC_ALIASES.get(key, key))


# --------------------------------------------------------------------------- shared views


@dataclass(frozen=True)
class NicSide:
    """What the NICs of some hosts do, with where the spec says so."""

    trust: str
    trust_path: DataPath
    pfc: tuple[int, ...]
    pfc_path: DataPath
    cnp_dscp: int
    cnp_priority: int
    cnp_path: DataPath
    dcqcn: bool
    hosts: tuple[str, ...]

    def label(self, total: int) -> str:
        if len(self.hosts) == total:
            return "the NICs"
        return f"the NICs of {plural(len(self.hosts), 'host')} ({preview(list(self.hosts))})"


_NIC_SIDES: MemoKey[list[NicSide]] = MemoKey("nic sides")


def nic_sides(ctx: LintContext) -> list[NicSide]:
    """The NIC settings in force, grouped by host; from each host's NIC intent when the planner made one."""
    cached = ctx.memo.get(_NIC_SIDES)
    if cached is not None:
        return cached
    spec, qos = ctx.spec, ctx.plan.qos
    nic = spec.nic
    trust_path = ("nic", "trust") if nic.trust is not None else ("qos", "trust")
    pfc_path: DataPath = ("nic", "pfc_priorities") if nic.pfc_priorities is not None else ("qos", "classes", qos.roce.name, "lossless")
    cnp_path: DataPath
    if nic.cnp is not None:
        cnp, cnp_path = (nic.cnp.dscp, nic.cnp.priority), ("nic", "cnp")
    elif qos.cnp is not None and qos.cnp.dscps:
        cnp, cnp_path = (qos.cnp.dscps[0], qos.cnp.priority), ("qos", "classes", qos.cnp.name)
    else:
        cnp, cnp_path = MLX5_DEFAULT_CNP, ("nic",)
    default = (nic.trust or spec.qos.trust,
               tuple(sorted(nic.pfc_priorities)) if nic.pfc_priorities is not None else qos.lossless_priorities,
               cnp, nic.dcqcn.enabled)
    groups: dict[tuple[object, ...], list[str]] = {}
    for host in ctx.plan.hosts:
        intent = host.nic_intent
        if intent is None:
            key: tuple[object, ...] = default
        else:
            key = (intent.trust, tuple(sorted(intent.pfc_priorities)), (intent.cnp_dscp, intent.cnp_priority),
                   intent.dcqcn.enabled)
        groups.setdefault(key, []).append(host.name)
    sides = [
        NicSide(str(trust), trust_path, pfc, pfc_path, cnp_[0], cnp_[1], cnp_path, bool(dcqcn),  # type: ignore[index,arg-type]
                tuple(names))
        for (trust, pfc, cnp_, dcqcn), names in groups.items()
    ]
    ctx.memo.put(_NIC_SIDES, sides)
    return sides


def dcqcn_on(ctx: LintContext) -> bool:
    return any(side.dcqcn for side in nic_sides(ctx))


def _class_of_priority(group: QosGroup, priority: int) -> str | None:
    for cls in group.qos.classes:
        if cls.priority == priority:
            return cls.name
    return None


def _owner_path(group: QosGroup, dscp: int) -> DataPath:
    """The class that claims ``dscp`` in a group's policy (its ``dscp`` entry), or the classes block."""
    for name, cls in group.policy.classes.items():
        if isinstance(cls.dscp, list) and dscp in cls.dscp:
            return group.class_path(name, "dscp", cls.dscp.index(dscp))
    for name, cls in group.policy.classes.items():
        if cls.dscp == "other":
            return group.class_path(name, "dscp")
    return (*group.path, "classes")


def _clean_int(text: str) -> int | None:
    """An integer NCCL reads exactly as written (decimal, no junk); None otherwise (FG40x report those)."""
    from fabgen.targets.nccl.variables import nccl_strtoll

    result = nccl_strtoll(text)
    if result.consumed != len(text) or result.overflow or re.match(r"[+-]?0[0-9]", text):
        return None
    return result.value


# --------------------------------------------------------------------------- rules


def roce_dscp_not_lossless(ctx: LintContext) -> Iterator[Hit]:
    """RoCE's DSCP is not on a PFC no-drop priority on some switches.

    What it checks:
        For every group of switches that share a QoS policy (``qos``, or a
        ``fabric.switch_overrides`` entry), each DSCP of the cluster's RoCE class
        must map to a priority that is PFC no-drop on those switches.

    Why it matters:
        Hosts mark RoCE with the cluster's DSCP. A switch that maps it to a lossy
        priority drops RoCE under congestion instead of pausing the sender; RoCE
        recovers with go-back-N retransmission and throughput collapses to a
        fraction of line rate (NVIDIA/nccl#378).

    Example:
        qos:
          classes:
            roce: {role: roce, dscp: [26], priority: 3, lossless: false, weight: 50}

    Fix:
        Make the RoCE class ``lossless: true``, and make every switch override
        keep the RoCE DSCP on a lossless priority.
    """
    dscps = ctx.plan.qos.roce.dscps
    for group in ctx.qos_groups:
        qos = group.qos
        for dscp in dscps:
            priority = qos.dscp_to_priority[dscp]
            if priority in qos.lossless_priorities:
                continue
            owner = _class_of_priority(group, priority)
            owner_cls = group.policy.classes.get(owner) if owner else None
            if owner_cls is not None and owner_cls.role == "roce":
                path = ctx.first_written(group.class_path(owner, "lossless"), group.class_path(owner))  # type: ignore[arg-type]
            else:
                path = _owner_path(group, dscp)
            yield Hit(
                f"RoCE DSCP {dscp} maps to priority {priority} ({owner or 'no class'}), which is not PFC no-drop "
                f"{group.label()}: RoCE is dropped there instead of paused",
                ctx.at(path),
                "give the RoCE DSCP a lossless class on every switch (lossless: true)",
                (ctx.at(("qos", "classes", ctx.plan.qos.roce.name, "dscp"), note="the cluster's RoCE DSCP"),)
                if group.is_override else (),
            )
            break


def nccl_tc_mismatch(ctx: LintContext) -> Iterator[Hit]:
    """NCCL's traffic class on some hosts is not the RoCE class's DSCP and ECN bits.

    What it checks:
        ``NCCL_IB_TC``, ``NCCL_IB_FIFO_TC`` and ``NCCL_GIN_IB_TC`` on every host (and
        the NIC's global traffic class and RDMA-CM ToS when the plan sets them) must
        be the IP TOS byte ``DSCP << 2 | ECN`` of the RoCE class: its DSCP, and the
        ECT(0) bits when switches mark ECN for DCQCN. A ``NCCL_IB_FIFO_TC`` aimed at
        the ``role: cts`` class is FG409's and FG410's to judge.

    Why it matters:
        NCCL writes this byte into every queue pair. Another DSCP puts RoCE on
        another (usually lossy) queue; Not-ECT bits make switches drop or ignore
        instead of marking, so DCQCN never slows senders down (nccl.md §3.6, §4.2).

    Example:
        nccl:
          env: {NCCL_IB_TC: 96}     # DSCP 24, but RoCE is DSCP 26

    Fix:
        Remove the hand-set value (fabgen derives it: 106 for DSCP 26 with ECN),
        or set ``DSCP * 4 + 2`` with ECN marking, ``DSCP * 4`` without.
    """
    from fabgen.plan.qos import control_class, traffic_class

    roce = ctx.plan.qos.roce
    cts = control_class(ctx.plan.qos)
    cts_dscps = cts.dscps if cts is not None else ()
    expected = traffic_class(ctx.spec, ctx.plan.qos)
    want_ect = expected & 0b11
    seen: dict[tuple[DataPath | None, str, int], list[str]] = {}
    parsed: dict[str, int | None] = {}
    for host in ctx.plan.hosts:
        env = ctx.env(host)
        values = [(var, env.get(var)) for var in TC_VARIABLES]
        intent = host.nic_intent
        if intent is not None:
            values += [("the NIC's global traffic_class", None if intent.traffic_class is None else str(intent.traffic_class)),
                       ("the RDMA-CM default ToS", None if intent.cma_roce_tos is None else str(intent.cma_roce_tos))]
        for var, raw in values:
            if raw is None:
                continue
            if raw not in parsed:
                parsed[raw] = _clean_int(raw)
            value = parsed[raw]
            if value is None or (value == -1 and var != "NCCL_IB_TC") or not 0 <= value <= 255:
                continue
            if ctx.plan.qos.dscp_to_priority[value >> 2] == roce.priority and (value & 0b11 == want_ect or not want_ect):
                continue
            if var == "NCCL_IB_FIFO_TC" and (value >> 2) in cts_dscps:
                continue  # aimed at the cts class on purpose: FG409/FG410 judge that pairing
            path = ctx.env_path(host, var) if var.startswith("NCCL_") else ("nic",)
            seen.setdefault((path, var, value), []).append(host.name)
    for (path, var, value), hosts in seen.items():
        dscp, ecn = value >> 2, value & 0b11
        where = f"on {plural(len(hosts), 'host')} ({preview(hosts)})"
        priority = ctx.plan.qos.dscp_to_priority[dscp]
        if priority != roce.priority:
            lossy = "" if priority in ctx.plan.qos.lossless_priorities else ", a lossy one"
            reason = (f"is DSCP {dscp}, which switches put on priority {priority}{lossy}, not on RoCE's "
                      f"priority {roce.priority}")
        else:
            reason = (f"carries ECN bits {_ECN_NAMES[ecn]}, but the RoCE queue marks ECN for DCQCN: "
                      "switches never mark Not-ECT packets, so senders are never slowed")
        yield Hit(
            f"{var}={value} {where} {reason}",
            ctx.at(path, key=True) if path else ctx.at(("qos", "classes", roce.name, "dscp")),
            f"remove it to get the derived value, or set {expected} (DSCP {roce.dscps[0] if roce.dscps else 0} "
            f"<< 2 | ECN {want_ect})",
        )


def nccl_tc_differs(ctx: LintContext) -> Iterator[Hit]:
    """NCCL_IB_TC is not the same on every host.

    What it checks:
        The effective ``NCCL_IB_TC`` of every host; when hosts differ, each value
        held by fewer hosts is reported where it is set.

    Why it matters:
        A queue pair takes its traffic class from the side that connects: between
        two hosts with different values, one direction travels in one class and
        the other direction in another (nccl.md §3.6), so half of the traffic
        may be lossy even though each host looks right on its own.

    Example:
        hosts:
          - profile: lab-node
            count: 4
            name: "lab{index:02d}"
            overrides:
              lab02: {nccl_env: {NCCL_IB_TC: 98}}

    Fix:
        Set the traffic class once for the cluster (or not at all: fabgen derives
        it) and drop the per-host values.
    """
    values: dict[str, list[str]] = {}
    sources: dict[tuple[str, DataPath | None], list[str]] = {}
    for host in ctx.plan.hosts:
        raw = ctx.env(host).get("NCCL_IB_TC")
        if raw is None:
            continue
        values.setdefault(raw, []).append(host.name)
        sources.setdefault((raw, ctx.env_path(host, "NCCL_IB_TC")), []).append(host.name)
    if len(values) < 2:
        return
    majority = max(values, key=lambda v: (len(values[v]), v))
    total = len(values[majority])
    for (raw, path), hosts in sources.items():
        if raw == majority:
            continue
        yield Hit(
            f"NCCL_IB_TC={raw} on {plural(len(hosts), 'host')} ({preview(hosts)}) but {majority} on "
            f"{plural(total, 'other host')}: traffic between them travels in two classes",
            ctx.at(path, key=True) if path else ctx.at(("nccl", "env")),
            f"use one value on every host ({majority})",
        )


def nic_trust_mismatch(ctx: LintContext) -> Iterator[Hit]:
    """The NICs' trust mode differs from the switches'.

    What it checks:
        The trust mode of the NICs (``nic.trust``, else ``qos.trust``) against the
        trust mode of every group of switches.

    Why it matters:
        With ``pcp`` trust a NIC classifies received RoCE by the VLAN priority bits,
        which untagged routed RoCE does not carry: everything lands on priority 0,
        PFC never pauses the RoCE queue, and CNPs are queued behind bulk data
        (nic.md §5.8).

    Example:
        nic:
          trust: pcp

    Fix:
        Leave ``nic.trust`` unset (it follows ``qos.trust``) or set ``dscp``.
    """
    sides = nic_sides(ctx)
    for side in sides:
        for group in ctx.qos_groups:
            if side.trust != group.qos.trust:
                yield Hit(
                    f"{side.label(len(ctx.plan.hosts))} trust {side.trust} but the switches trust "
                    f"{group.qos.trust} {group.label()}: the NIC classifies RoCE differently from the fabric",
                    ctx.at(side.trust_path),
                    f"set nic.trust: {group.qos.trust} (or leave it unset)",
                    (ctx.at((*group.path, "trust"), note="switch trust"),),
                )


def nic_pfc_mismatch(ctx: LintContext) -> Iterator[Hit]:
    """The NICs pause other priorities than the switches.

    What it checks:
        The NICs' PFC priorities (``nic.pfc_priorities``, else the lossless classes')
        against the PFC no-drop priorities of every group of switches.

    Why it matters:
        PFC works hop by hop: a NIC that does not honour pause frames on the RoCE
        priority overruns the leaf's headroom and the leaf drops; a NIC that pauses
        a priority the switch treats as lossy sends pause frames nobody expects.

    Example:
        nic:
          pfc_priorities: [4]

    Fix:
        Leave ``nic.pfc_priorities`` unset (it follows the lossless classes), or list
        exactly the switches' lossless priorities.
    """
    for side in nic_sides(ctx):
        for group in ctx.qos_groups:
            switch = tuple(group.qos.lossless_priorities)
            if tuple(sorted(side.pfc)) != switch:
                yield Hit(
                    f"{side.label(len(ctx.plan.hosts))} enable PFC on priorities "
                    f"{_prios(side.pfc)} but the switches pause {_prios(switch)} {group.label()}",
                    ctx.at(side.pfc_path),
                    f"make both sides pause {_prios(switch)}",
                    (ctx.at((*group.path, "classes"), note="switch classes"),),
                )


def _prios(values: tuple[int, ...] | list[int]) -> str:
    return "{" + ", ".join(map(str, sorted(values))) + "}" if values else "none"


def cnp_class_mismatch(ctx: LintContext) -> Iterator[Hit]:
    """The NICs' CNPs do not land in the switches' CNP class.

    What it checks:
        With DCQCN on, the DSCP the NICs give their congestion notification packets
        (``nic.cnp``, else the CNP class's first DSCP, else mlx5's 48) must map to
        the CNP class's priority on every group of switches, and the NICs' CNP
        802.1p priority must be that priority.

    Why it matters:
        A CNP tells a sender to slow down; stuck behind bulk data in a congested
        queue it arrives too late, and DCQCN oscillates or does nothing. Switches
        without a CNP class put CNPs wherever their DSCP falls (nic.md §5.9).

    Example:
        nic:
          cnp: {dscp: 46, priority: 6}     # the CNP class is DSCP 48

    Fix:
        Leave ``nic.cnp`` unset (it follows the class with ``role: cnp``), and give
        every switch policy a CNP class.
    """
    for side in nic_sides(ctx):
        if not side.dcqcn:
            continue
        label = side.label(len(ctx.plan.hosts))
        for group in ctx.qos_groups:
            qos = group.qos
            lands = qos.dscp_to_priority[side.cnp_dscp]
            if qos.cnp is None:
                yield Hit(
                    f"{group.label().capitalize()} there is no CNP class: {label} send CNPs with DSCP "
                    f"{side.cnp_dscp}, which land on priority {lands} ({_class_of_priority(group, lands) or 'no class'})",
                    ctx.at((*group.path, "classes")),
                    "add a class with role: cnp, strict: true for the CNP DSCP",
                    (ctx.at(side.cnp_path, note="NIC CNP setting"),),
                )
                continue
            problems = []
            if lands != qos.cnp.priority:
                problems.append(f"DSCP {side.cnp_dscp} maps to priority {lands} there")
            if side.cnp_priority != qos.cnp.priority:
                problems.append(f"802.1p priority {side.cnp_priority} is not the class's")
            if problems:
                yield Hit(
                    f"{label} send CNPs with DSCP {side.cnp_dscp} and priority {side.cnp_priority}, but the CNP class "
                    f"{qos.cnp.name} is priority {qos.cnp.priority} {group.label()}: {'; '.join(problems)}",
                    ctx.at(side.cnp_path),
                    f"send CNPs with DSCP {qos.cnp.dscps[0] if qos.cnp.dscps else side.cnp_dscp} and priority "
                    f"{qos.cnp.priority} (leave nic.cnp unset)",
                    (ctx.at(group.class_path(qos.cnp.name), note="switch CNP class"),),
                )


def cnp_not_strict(ctx: LintContext) -> Iterator[Hit]:
    """The CNP class is not strict priority.

    What it checks:
        The class with ``role: cnp`` in every switch policy must be ``strict: true``.

    Why it matters:
        CNPs are few and small but time-critical: in a weighted queue they wait
        behind whatever that queue holds, and the sender keeps blasting at full rate
        while the congestion they report gets worse.

    Example:
        qos:
          classes:
            cnp: {role: cnp, dscp: [48], priority: 6, weight: 10}

    Fix:
        Make the CNP class ``strict: true`` (and drop its ``weight``).
    """
    for group in ctx.qos_groups:
        cnp = group.qos.cnp
        if cnp is not None and not cnp.strict:
            yield Hit(
                f"CNP class {cnp.name} is weighted, not strict priority, {group.label()}",
                ctx.at(ctx.first_written(group.class_path(cnp.name, "weight"), group.class_path(cnp.name))),
                "set strict: true on the CNP class",
            )


def cnp_lossless(ctx: LintContext) -> Iterator[Hit]:
    """CNPs travel on a PFC no-drop priority.

    What it checks:
        The CNP class must not be lossless, and its priority must not be one of the
        PFC no-drop priorities of the same switches.

    Why it matters:
        A paused CNP cannot tell anyone to slow down: congestion notification stops
        exactly when it is needed, and a CNP queue that can be paused joins PFC
        deadlock cycles (switch.md §3: CNP is "not a PFC priority").

    Example:
        qos:
          classes:
            cnp: {role: cnp, dscp: [48], priority: 6, strict: true, lossless: true}

    Fix:
        Keep the CNP class lossy, on a priority of its own.
    """
    for group in ctx.qos_groups:
        cnp = group.qos.cnp
        if cnp is None:
            continue
        if cnp.lossless or cnp.priority in group.qos.lossless_priorities:
            path = group.class_path(cnp.name, "lossless") if cnp.lossless else group.class_path(cnp.name, "priority")
            yield Hit(
                f"CNP class {cnp.name} is on PFC no-drop priority {cnp.priority} {group.label()}: "
                "paused CNPs cannot slow senders down",
                ctx.at(ctx.first_written(path, group.class_path(cnp.name))),
                "make the CNP class lossy, on a priority no lossless class uses",
            )


def lossless_without_ecn(ctx: LintContext) -> Iterator[Hit]:
    """A lossless queue has no ECN marking while the NICs run DCQCN.

    What it checks:
        With ``nic.dcqcn.enabled``, every lossless class of every switch policy must
        have ``ecn`` thresholds.

    Why it matters:
        DCQCN slows a sender only when a switch marks its packets with ECN. Without
        marking, congestion is handled by PFC alone: pause frames spread upstream,
        victim flows stall, and the NICs spend CPU on DCQCN for nothing.

    Example:
        nic: {dcqcn: {enabled: true}}
        qos:
          classes:
            roce: {role: roce, dscp: [26], priority: 3, lossless: true, weight: 50}

    Fix:
        Add ``ecn: {min: 150KB, max: 1500KB}`` to the lossless class, or turn DCQCN
        off on the NICs (PFC-only, as Meta runs 400G).
    """
    if not dcqcn_on(ctx):
        return
    for group in ctx.qos_groups:
        for cls in group.qos.classes:
            if cls.lossless and cls.ecn_min is None:
                yield Hit(
                    f"lossless class {cls.name} has no ECN marking {group.label()}, but the NICs run DCQCN, "
                    "which reacts only to ECN marks",
                    ctx.at(group.class_path(cls.name)),
                    "add ecn: {min: 150KB, max: 1500KB} to the class, or set nic.dcqcn.enabled: false",
                    (ctx.at(("nic", "dcqcn"), note="DCQCN on"),),
                )


def ecn_without_dcqcn(ctx: LintContext) -> Iterator[Hit]:
    """Switches mark ECN but the NICs' DCQCN is off.

    What it checks:
        With ``nic.dcqcn.enabled: false``, no class should carry ``ecn`` thresholds.

    Why it matters:
        Marks nobody reacts to do no harm on their own, but they say the fabric
        relies on DCQCN when it does not: whoever tunes the thresholds tunes
        nothing, and the NCCL traffic class gets ECT bits for no reason.

    Example:
        nic: {dcqcn: {enabled: false}}
        qos:
          classes:
            roce: {role: roce, dscp: [26], priority: 3, lossless: true, weight: 50,
                   ecn: {min: 150KB, max: 1500KB}}

    Fix:
        Drop the ``ecn`` block (PFC-only fabric), or turn DCQCN on.
    """
    if dcqcn_on(ctx):
        return
    for group in ctx.qos_groups:
        for cls in group.qos.classes:
            if cls.ecn_min is not None:
                yield Hit(
                    f"class {cls.name} marks ECN {group.label()}, but DCQCN is off on every NIC: "
                    "no sender reacts to the marks",
                    ctx.at(group.class_path(cls.name, "ecn"), key=True),
                    "remove the ecn block, or enable nic.dcqcn",
                    (ctx.at(("nic", "dcqcn", "enabled"), note="DCQCN off"),),
                )


def ecn_thresholds(ctx: LintContext) -> Iterator[Hit]:
    """ECN thresholds that can never work: min not below max, or max above the switch's buffer.

    What it checks:
        For every class with ``ecn``: ``min`` must be below ``max``, and ``max`` must
        be below the whole packet buffer of the switches' ASIC (``fabric.tiers.*.asic``,
        known for Tomahawk 2-5 and Spectrum 2-4).

    Why it matters:
        A queue never grows beyond the buffer, so a larger maximum threshold means
        the marking probability never reaches its configured value; with the minimum
        above the buffer nothing is ever marked and DCQCN is blind.

    Example:
        fabric:
          tiers:
            leaf: {os: eos, model: 7060DX5-32, asic: th4, ports: 32, speed: 400G}
        qos:
          classes:
            roce: {role: roce, dscp: [26], priority: 3, lossless: true, weight: 50,
                   ecn: {min: 150KB, max: 200MB}}

    Fix:
        Keep thresholds in the usual range for 400G: 150 KB to 1.5-3 MB (switch.md §5.1).
    """
    for group in ctx.qos_groups:
        buffers: dict[str, int] = {}
        for switch in group.switches:
            size = asic_buffer(switch.asic)
            if size is not None and switch.asic is not None:
                buffers.setdefault(switch.asic, size)
        for cls in group.qos.classes:
            if cls.ecn_min is None or cls.ecn_max is None:
                continue
            path = group.class_path(cls.name, "ecn")
            if cls.ecn_min >= cls.ecn_max:
                yield Hit(f"class {cls.name}: ECN min {cls.ecn_min} B is not below max {cls.ecn_max} B "
                          f"{group.label()}", ctx.at((*path, "min")), "set min below max")
            for asic, size in sorted(buffers.items()):
                if cls.ecn_max > size:
                    yield Hit(
                        f"class {cls.name}: ECN max {cls.ecn_max:,} B is above the {size // 10**6} MB packet buffer "
                        f"of {asic} {group.label()}: the queue never gets that long",
                        ctx.at(ctx.first_written((*path, "max"), path)),
                        "use thresholds well inside the buffer (150KB .. 3MB for 400G)",
                    )


def _policies(ctx: LintContext) -> list[tuple[object, DataPath]]:
    """Every QoS policy of the spec with its path, used by switches or not."""
    out: list[tuple[object, DataPath]] = [(ctx.spec.qos, ("qos",))]
    for index, override in enumerate(ctx.spec.fabric.switch_overrides):
        out.append((override.qos, ("fabric", "switch_overrides", index, "qos")))
    return out


def dscp_in_two_classes(ctx: LintContext) -> Iterator[Hit]:
    """A DSCP is listed in two classes of one policy.

    What it checks:
        Within ``qos`` and within each switch override, every DSCP may appear in at
        most one class.

    Why it matters:
        A DSCP maps to one priority only; fabgen keeps the first class that names
        it, so the second class silently does not get that traffic. If the second
        one was the lossless RoCE class, RoCE is lossy.

    Example:
        qos:
          classes:
            roce: {role: roce, dscp: [26], priority: 3, lossless: true, weight: 50}
            bulk: {dscp: [26, 10], priority: 1, weight: 50}

    Fix:
        Remove the DSCP from the class that should not have it.
    """
    for policy, path in _policies(ctx):
        owner: dict[int, str] = {}
        for name, cls in policy.classes.items():  # type: ignore[attr-defined]
            if not isinstance(cls.dscp, list):
                continue
            for index, dscp in enumerate(cls.dscp):
                if dscp in owner:
                    yield Hit(
                        f"DSCP {dscp} is in class {owner[dscp]} and in class {name}; it goes to {owner[dscp]} only",
                        ctx.at((*path, "classes", name, "dscp", index)),
                        f"keep DSCP {dscp} in one class",
                        (ctx.at((*path, "classes", owner[dscp]), note=f"class {owner[dscp]}"),),
                    )
                else:
                    owner[dscp] = name


def too_many_lossless(ctx: LintContext) -> Iterator[Hit]:
    """More than two lossless priorities.

    What it checks:
        Each QoS policy may make at most two priorities PFC no-drop.

    Why it matters:
        Every lossless priority reserves PFC headroom on every port; shallow-buffer
        ASICs have room for two (SONiC's defaults use 3 and 4). A third eats the
        shared buffer, pauses start earlier, and some platforms refuse the config.

    Example:
        qos:
          classes:
            roce:  {role: roce, dscp: [26], priority: 3, lossless: true, weight: 40}
            stor:  {dscp: [24], priority: 4, lossless: true, weight: 20}
            ctl:   {dscp: [16], priority: 2, lossless: true, weight: 20}

    Fix:
        Keep RoCE (and at most one more class) lossless; make the rest lossy.
    """
    for policy, path in _policies(ctx):
        lossless = [(name, cls.priority) for name, cls in policy.classes.items() if cls.lossless]  # type: ignore[attr-defined]
        priorities = sorted({p for _, p in lossless})
        if len(priorities) > 2:
            third = next(name for name, p in lossless if p == priorities[2])
            yield Hit(
                f"{len(priorities)} lossless priorities ({', '.join(map(str, priorities))}); switches have PFC "
                "headroom for two",
                ctx.at(ctx.first_written((*path, "classes", third, "lossless"), (*path, "classes", third))),
                "make at most two priorities lossless",
            )


def pfc_watchdog_disabled(ctx: LintContext) -> Iterator[Hit]:
    """The PFC watchdog is off on switches with lossless priorities.

    What it checks:
        ``qos.pfc.watchdog.enabled`` (and each override's) when the policy has a
        lossless class.

    Why it matters:
        A NIC or switch that pauses forever (a PFC storm, a deadlock) freezes its
        priority across the fabric. The watchdog detects a queue stuck in pause and
        drops its traffic so the rest of the fabric keeps moving.

    Example:
        qos:
          pfc:
            watchdog: {enabled: false}

    Fix:
        Turn the watchdog on (``enabled: true``, the default).
    """
    for group in ctx.qos_groups:
        if group.qos.lossless_priorities and not group.qos.watchdog.enabled:
            yield Hit(
                f"PFC watchdog is off {group.label()}, which pause priorities "
                f"{_prios(group.qos.lossless_priorities)}: a PFC storm would freeze them",
                ctx.at(ctx.first_written((*group.path, "pfc", "watchdog", "enabled"), (*group.path, "pfc"))),
                "set pfc.watchdog.enabled: true",
            )


def mtu_too_small(ctx: LintContext) -> Iterator[Hit]:
    """Switch MTU too small for the hosts' RoCE packets.

    What it checks:
        The switch port MTU (``qos.mtu`` and each override's) must hold a full RoCE
        packet: the NICs' RoCE MTU (``nic.roce_mtu``, payload) plus IPv4, UDP, BTH,
        RETH and ICRC headers (60 bytes).

    Why it matters:
        The NIC sizes RoCE packets by its RoCE MTU, not by the path; a switch drops
        larger packets without telling anyone, and the queue pair retries until it
        fails with "transport retry counter exceeded" (NCCL error 12).

    Example:
        qos:
          mtu: 1500           # but nic.roce_mtu is 4096
        nic:
          roce_mtu: 4096

    Fix:
        Raise the switch MTU (9216 is usual), or lower ``nic.roce_mtu``.
    """
    need = ctx.spec.nic.roce_mtu + ROCE_HEADERS_IPV4
    for group in ctx.qos_groups:
        if group.qos.mtu < need:
            yield Hit(
                f"switch MTU {group.qos.mtu} {group.label()} is below the {need} bytes a RoCE packet with a "
                f"{ctx.spec.nic.roce_mtu}-byte payload needs: full-size RoCE packets are dropped",
                ctx.at(ctx.first_written((*group.path, "mtu"), group.path)),
                f"set mtu to at least {need} (9216 is usual)",
                (ctx.at(ctx.first_written(("nic", "roce_mtu"), ("nic",)), note="RoCE MTU"),),
            )


def switch_override_unused(ctx: LintContext) -> Iterator[Hit]:
    """A switch override that applies to no switch.

    What it checks:
        Each ``fabric.switch_overrides`` entry must match at least one switch that
        no earlier entry already took.

    Why it matters:
        A glob with a typo (``leaf-r1-*`` for ``leaf-r1-p00-*`` is fine, ``lef-*`` is
        not) leaves the switches it was meant for on the default policy, and nothing
        else would tell.

    Example:
        fabric:
          switch_overrides:
            - match: "lef-*"
              qos: {classes: {roce: {role: roce, dscp: [26], priority: 3, lossless: true, weight: 50}}}

    Fix:
        Correct the ``match`` glob (``fabgen plan`` lists switch names), or remove the entry.
    """
    used = {g.path[2] for g in ctx.qos_groups if g.is_override}
    for index, override in enumerate(ctx.spec.fabric.switch_overrides):
        if index not in used:
            yield Hit(
                f"switch override {override.match!r} applies to no switch (or only to switches an earlier "
                "override already took)",
                ctx.at(("fabric", "switch_overrides", index, "match")),
                "fix the glob or remove the override",
            )


def nic_headroom_cable(ctx: LintContext) -> Iterator[Hit]:
    """A host cable longer than the NIC's PFC headroom allows for.

    What it checks:
        Every in-service host-leaf cable (its ``fabric.cabling`` length, else
        ``qos.cable_length``, per role ``host_leaf``) must be at most 7 m when the
        NICs are mlx5 and PFC is on: the cable length mlx5 assumes in its automatic
        port-buffer mode.

    Why it matters:
        A NIC that pauses its leaf must still absorb what is on the wire until the
        pause arrives; that headroom grows with the cable. mlx5 turns a cable length
        into headroom only in its manual buffer mode (``mlx5e_dcbnl_ieee_setpfc``),
        so ``mlnx_qos --cable_len`` changes nothing by itself, and fabgen's
        ``roce-nic.sh`` does not set it. On a longer cable, a NIC that cannot drain
        (PCIe or host-memory backpressure) can drop "lossless" RoCE packets.

    Example:
        qos:
          cable_length: 40m        # host cables too: use {host_leaf: 3m, leaf_spine: 40m}

    Fix:
        Give the host cables their real length (``cable_length: {host_leaf: ...}``);
        if they are longer than 7 m, size the NIC buffers by hand in mlx5's manual
        buffer mode (``mlnx_qos --buffer_size`` and ``--cable_len``) and accept this
        warning with ``# fabgen: disable=FG118``.
    """
    for group in ctx.qos_groups:  # nic.vendor can only be mlx5 so far
        if not group.qos.lossless_priorities:
            continue
        long: dict[str, int] = {}
        own: list[DataPath] = []  # fabric.cabling entries whose own length is the long one
        for switch in group.switches:
            for port in switch.ports:
                if port.peer_kind != "host" or port.shutdown or port.cable_m <= MLX5_AUTO_BUFFER_CABLE_M:
                    continue
                long[port.peer_device] = max(long.get(port.peer_device, 0), port.cable_m)
                path = ctx.cable_paths.get(frozenset({(port.peer_device, port.peer_port), (switch.name, port.name)}))
                if path is not None and ctx.spec.fabric.cabling[path[2]].length is not None:  # type: ignore[index]
                    own.append(path)
        if not long:
            continue
        hosts = sorted(long)
        role = ctx.first_written((*group.path, "cable_length", "host_leaf"), (*group.path, "cable_length"),
                                 group.path)
        own.sort(key=lambda p: p[2])
        where = own[0] if own and len(own) == len(hosts) else role
        yield Hit(
            f"{hosts_phrase(hosts)} {'has' if len(hosts) == 1 else 'have'} host cables of up to "
            f"{max(long.values())} m, but mlx5 NICs size their PFC headroom for "
            f"{MLX5_AUTO_BUFFER_CABLE_M} m in the automatic buffer mode: a NIC that pauses may still drop",
            ctx.at(where),
            f"give host cables their real length (cable_length: {{host_leaf: ...}}); beyond "
            f"{MLX5_AUTO_BUFFER_CABLE_M} m size the NIC buffers by hand (mlnx_qos --buffer_size)",
            tuple(ctx.at(p, note="this cable's own length") for p in own[:3] if p != where),
        )
