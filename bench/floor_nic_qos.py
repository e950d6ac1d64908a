"""The floor of ``nic-qos``: each host's ``roce-nic.conf`` by f-strings from its NIC intent, no template, no check."""

from __future__ import annotations

from fabgen.pipeline import __version__
from fabgen.plan import FabricPlan
from fabgen.plan.nic_intent import HostNicIntent
from fabgen.targets.mlx5.scripts import PLAN_FORMAT


def _words(values: tuple[int, ...] | tuple[str, ...]) -> str:
    return " ".join(map(str, values))


def _blank(value: int | None) -> str:
    return "" if value is None else str(value)


def _plan(i: HostNicIntent, mtus: dict[str, int]) -> str:
    lines = [f"# roce-nic.sh plan of host {i.host}, by fabgen {__version__}: change the spec, not this file.",
             "# Read as data (never sourced) by roce-nic.sh, whose comments say what each key means.",
             f"FORMAT={PLAN_FORMAT}", f"HOST={i.host}", f"TRUST={i.trust}", f"DSCP_PRIO={_words(i.dscp_to_priority)}",
             f"PFC_EN={_words(i.pfc_enabled)}", f"PRIO_TC={_words(i.prio_tc)}", f"TC_TSA={_words(i.tc_tsa)}",
             f"TC_BW={_words(i.tc_bandwidth)}", f"DCBX_OS={'yes' if i.dcbx_os_controlled else 'no'}",
             f"PAUSE_OFF={'yes' if i.disable_global_pause else 'no'}", f"DCQCN={'on' if i.dcqcn.enabled else 'off'}",
             f"ECN_ENABLE={_words(i.ecn_enabled)}", "CC=" + " ".join(f"{s.debugfs}:{s.value}" for s in i.cc_settings),
             f"CMA_ROCE_MODE={_blank(i.cma_roce_mode)}", f"CMA_ROCE_TOS={_blank(i.cma_roce_tos)}",
             f"TRAFFIC_CLASS={_blank(i.traffic_class)}"]
    lines += [f"NIC={n.name} {n.netdev} {n.pci} {n.port} {n.rail} {mtus.get(n.netdev, '-')}" for n in i.nics]
    return "\n".join(lines) + "\n"


def floor_files(plan: FabricPlan) -> dict[str, str]:
    """``{hosts/NAME/roce-nic.conf: text}`` for every host with backend NICs, like the target."""
    files: dict[str, str] = {}
    for host in plan.hosts:
        if host.nic_intent is not None:
            mtus = {i.netdev: i.mtu for i in host.network.interfaces} if host.network is not None else {}
            files[f"hosts/{host.name}/roce-nic.conf"] = _plan(host.nic_intent, mtus)
    return files
