"""NIC intents from the spec: what ``roce-nic.sh`` (from each host's plan) and ``nic-firmware.sh`` establish.

The NIC side mirrors the switch side: same DSCP map, same lossless priorities,
same CNP class; the NIC policy may override trust, the PFC vector or the CNP
marking (the linter then reports the disagreement).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fabgen.plan.model import HostNic, QosIntent
from fabgen.plan.nic_intent import (
    CC_PARAMS,
    DcqcnIntent,
    FirmwareDevice,
    FirmwareIntent,
    HostNicIntent,
    NicPort,
)
from fabgen.plan.qos import traffic_class

if TYPE_CHECKING:  # annotations only: importing the pydantic models costs the cached one-device path
    from fabgen.spec import ClusterSpec

DEFAULT_CNP = (48, 6)
"""DSCP and priority of CNPs when the policy names no CNP class (mlx5's own defaults)."""


def cnp_marking(spec: ClusterSpec, qos: QosIntent) -> tuple[int, int]:
    if spec.nic.cnp is not None:
        return spec.nic.cnp.dscp, spec.nic.cnp.priority
    if qos.cnp is not None and qos.cnp.dscps:
        return qos.cnp.dscps[0], qos.cnp.priority
    return DEFAULT_CNP


def pfc_priorities(spec: ClusterSpec, qos: QosIntent) -> tuple[int, ...]:
    return tuple(sorted(spec.nic.pfc_priorities)) if spec.nic.pfc_priorities is not None else qos.lossless_priorities


def _dcqcn(spec: ClusterSpec, qos: QosIntent) -> DcqcnIntent:
    """DCQCN reacts on the lossless priorities and on RoCE's own (RoCE may run lossy with DCQCN alone)."""
    policy = spec.nic.dcqcn
    priorities = sorted({*pfc_priorities(spec, qos), qos.roce.priority})
    return DcqcnIntent.from_names(policy.enabled, priorities, policy.rp, policy.np)


def _scheduling(qos: QosIntent) -> tuple[tuple[int, ...], tuple[str, ...], tuple[int, ...]]:
    """prio_tc, TSA and ETS bandwidth per TC, from the classes' queues (unused TCs: ETS 0 %)."""
    prio_tc = tuple(qos.priority_to_queue)
    tsa = ["ets"] * 8
    bandwidth = [0] * 8
    for cls in qos.classes:
        if cls.strict:
            tsa[cls.queue] = "strict"
    for cls in qos.classes:
        if cls.weight is not None and tsa[cls.queue] == "ets":  # a queue shared with a strict class is strict
            bandwidth[cls.queue] += cls.weight
    ets = [tc for tc in range(8) if tsa[tc] == "ets"]
    if ets and sum(bandwidth[tc] for tc in ets) != 100:
        # Weights of classes moved to strict queues are gone: give the rest to the ETS queues that have weight.
        weighted = [tc for tc in ets if bandwidth[tc]] or ets[:1]
        total = sum(bandwidth[tc] for tc in weighted) or 1
        shares = [bandwidth[tc] * 100 // total if bandwidth[tc] else 100 // len(weighted) for tc in weighted]
        shares[0] += 100 - sum(shares)
        for tc, share in zip(weighted, shares, strict=True):
            bandwidth[tc] = share
    return prio_tc, tuple(tsa), tuple(bandwidth)


def host_nic_intent(spec: ClusterSpec, host: str, nics: tuple[HostNic, ...], qos: QosIntent) -> HostNicIntent | None:
    """The NIC intent of one host (hosts of one profile share it: :class:`fabgen.plan.host_intents.HostMemo`)."""
    ports = tuple(NicPort(n.name, n.netdev, n.pci, n.rail, n.port) for n in nics if n.rail is not None and n.in_service)
    if not ports:
        return None
    prio_tc, tsa, bandwidth = _scheduling(qos)
    cnp_dscp, cnp_priority = cnp_marking(spec, qos)
    tos = traffic_class(spec, qos)
    return HostNicIntent(
        host=host, nics=ports, trust=spec.nic.trust or qos.trust,  # type: ignore[arg-type]
        dscp_to_priority=qos.dscp_to_priority, pfc_priorities=pfc_priorities(spec, qos),
        prio_tc=prio_tc, tc_tsa=tsa, tc_bandwidth=bandwidth,  # type: ignore[arg-type]
        dcqcn=_dcqcn(spec, qos), cnp_dscp=cnp_dscp, cnp_priority=cnp_priority,
        cma_roce_mode=2, cma_roce_tos=tos, traffic_class=tos,
    )


def firmware_intents(spec: ClusterSpec, qos: QosIntent) -> dict[str, FirmwareIntent]:
    cnp_dscp, cnp_priority = cnp_marking(spec, qos)
    dcqcn = _dcqcn(spec, qos)
    mask = sum(1 << p for p in dcqcn.priorities) if dcqcn.enabled else 0
    boot_params = tuple((n, v) for n, v in (*dcqcn.rp, *dcqcn.np) if CC_PARAMS[n].mlxconfig is not None)
    intents = {}
    for name, profile in spec.host_profiles.items():
        devices = tuple(FirmwareDevice(n.pci, (n.port,), (n.name,)) for n in profile.backend_nics())
        intents[name] = FirmwareIntent(profile=name, devices=devices, roce_cc_prio_mask=mask, cnp_dscp=cnp_dscp,
                                       cnp_802p_prio=cnp_priority, cc_params=boot_params)
    return intents
