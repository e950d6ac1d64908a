"""Per-host intents: the NIC list in rail order, the NCCL environment, the NIC QoS.

Derived, never typed by hand: NCCL_IB_HCA comes from the profile's rails and the
host's out-of-service NICs, NCCL_IB_TC from the RoCE class's DSCP and ECN.
"""

from __future__ import annotations

from fabgen.plan.model import Host, HostNic, Link, QosIntent
from fabgen.spec import ClusterSpec
from fabgen.spec.hosts import HostOverride

ECT0 = 0b10
"""ECN-capable transport, codepoint ECT(0): what DCQCN senders put in the IP header."""


def parse_version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


def traffic_class(spec: ClusterSpec, qos: QosIntent) -> int:
    """The IP TOS byte of RoCE traffic: DSCP << 2 | ECN bits (106 for DSCP 26 with ECT(0))."""
    ecn = ECT0 if qos.roce.ecn_min is not None and spec.nic.dcqcn.enabled else 0
    return qos.roce.dscps[0] << 2 | ecn if qos.roce.dscps else 0


def topology_file_path(spec: ClusterSpec) -> str:
    """Where a host installs its profile's NCCL topology XML."""
    return f"{spec.nccl.install_prefix}/nccl-topo.xml"


def host_plan(spec: ClusterSpec, name: str, profile_name: str, group: int, override: HostOverride | None,
              pod: int, mgmt: str | None, host_links: dict[tuple[str, str], Link], qos: QosIntent) -> Host:
    profile = spec.host_profiles[profile_name]
    out = set(override.nics_out_of_service) if override else set()
    ordered = profile.backend_nics() + [n for n in profile.nics if n.rail is None]
    nics = []
    for nic in ordered:
        link = host_links.get((name, nic.netdev))
        nics.append(HostNic(
            name=nic.name, netdev=nic.netdev, pci=nic.pci, numa=nic.numa, rail=nic.rail, speed=nic.speed,
            port=nic.port, in_service=nic.name not in out, address=link.a_address if link else None,
            leaf=link.b_device if link else None, leaf_port=link.b_port if link else None,
        ))
    env = nccl_environment(spec, profile_name, nics, qos, override)
    return Host(name=name, profile=profile_name, group=group, pod=pod, mgmt=mgmt, nics=tuple(nics),
                nccl_env=env, nic_intent=None, description=override.description if override else "")


def nccl_environment(spec: ClusterSpec, profile_name: str, nics: list[HostNic], qos: QosIntent,
                     override: HostOverride | None) -> tuple[tuple[str, str], ...]:
    version = parse_version(spec.nccl.version)
    with_rails = version >= (2, 30, 7)
    hca = ",".join(
        f"{n.name}:{n.port}:{n.rail}" if with_rails else f"{n.name}:{n.port}"
        for n in nics if n.rail is not None and n.in_service
    )
    tc = traffic_class(spec, qos)
    profile = spec.host_profiles[profile_name]
    env: dict[str, str] = {
        "NCCL_IB_HCA": f"={hca}",
        "NCCL_IB_TC": str(tc),
        "NCCL_IB_FIFO_TC": str(tc),
        "NCCL_SOCKET_IFNAME": f"={profile.frontend.netdev}",
        "NCCL_TOPO_FILE": topology_file_path(spec),
    }
    if version >= (2, 30, 0):
        env["NCCL_GIN_IB_TC"] = str(tc)
    cross_nic = spec.nccl.cross_nic
    if cross_nic is None and spec.fabric.rails > 1:
        cross_nic = 0  # rail-optimized: pair same-rail NICs so traffic stays on the rail's leaves
    if cross_nic is not None:
        env["NCCL_CROSS_NIC"] = str(cross_nic)
    if version < (2, 21, 0):
        env["NCCL_IB_GID_INDEX"] = "3"  # IPv4 RoCEv2 GID on mlx5 with default GID table; older NCCL uses GID 0
    else:
        env["NCCL_IB_ROCE_VERSION_NUM"] = "2"
        env["NCCL_IB_ADDR_RANGE"] = str(spec.fabric.addressing.p2p)
    for source in (spec.nccl.env, override.nccl_env if override else {}):
        for key, value in source.items():
            env[key] = _nccl_value(value)
    return tuple(env.items())


def _nccl_value(value: bool | int | str) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def firmware_intents(spec: ClusterSpec, qos: QosIntent) -> dict:  # type: ignore[type-arg]
    """Per-profile persistent NIC settings (filled by the NIC intent builder)."""
    return {}
