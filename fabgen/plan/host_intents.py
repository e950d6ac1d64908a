"""Per-host intents: the NIC list in rail order, the NCCL environment, the NIC QoS.

Derived, never typed by hand: NCCL_IB_HCA comes from the profile's rails and the
host's out-of-service NICs, NCCL_IB_TC from the RoCE class's DSCP and ECN,
NCCL_IB_FIFO_TC from a strict ``cts`` class, the QP count from switch QP hashing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from fabgen.plan._fast import blank, maker
from fabgen.plan.model import Host, HostNic, Link, QosIntent
from fabgen.plan.nic import host_nic_intent
from fabgen.plan.qos import class_tos, fifo_class, traffic_class
from fabgen.targets.nccl.variables import format_value, parse_version

if TYPE_CHECKING:  # annotations only: importing the pydantic models costs the cached one-device path
    from fabgen.plan.nic_intent import HostNicIntent
    from fabgen.spec import ClusterSpec
    from fabgen.spec.hosts import HostOverride


def topology_file_path(spec: ClusterSpec) -> str:
    """Where a host installs its profile's NCCL topology XML."""
    return f"{spec.nccl.install_prefix}/nccl-topo.xml"


@dataclass(slots=True)
class HostMemo:
    """What one plan's hosts share, so that 3,000 hosts of one profile derive it once.

    ``nics``: each profile's NICs in host order (backend ones in rail order, then
    the rest), as the (name, netdev, pci, numa, rail, speed, port) of their
    :class:`HostNic`: plain tuples, read 30k times at 24k GPUs where the spec's
    models cost an attribute lookup per field. ``shared``: the NCCL environment and NIC intent of a (profile, QoS
    policy, NICs out of service, override) combination; they depend on nothing
    else, the intent's host name aside (:meth:`HostNicIntent.for_host`).
    """

    nics: dict[str, tuple[tuple[str, str, str, int, int | None, int, int], ...]] = field(default_factory=dict)
    shared: dict[tuple[object, ...], tuple[tuple[tuple[str, str], ...], HostNicIntent | None]] = field(
        default_factory=dict)


def host_plan(spec: ClusterSpec, name: str, profile_name: str, group: int, override: HostOverride | None,
              pod: int, mgmt: str | None, host_links: dict[tuple[str, str], Link], qos: QosIntent,
              memo: HostMemo | None = None) -> Host:
    memo = HostMemo() if memo is None else memo
    ordered = memo.nics.get(profile_name)
    if ordered is None:
        profile = spec.host_profiles[profile_name]
        ordered = memo.nics[profile_name] = tuple(
            (n.name, n.netdev, n.pci, n.numa, n.rail, n.speed, n.port)
            for n in (*profile.backend_nics(), *(n for n in profile.nics if n.rail is None)))
    out = set(override.nics_out_of_service) if override else set()
    nics = []
    blank_nic, nic_class, links = _blank_nic, HostNic, host_links.get
    for nic_name, netdev, pci, numa, rail, speed, port in ordered:
        link = links((name, netdev))
        # HostNic(...) with every field, set one by one on its slot twin (fabgen.plan._fast.blank): 25k at 24k GPUs
        item = blank_nic()
        item.name, item.netdev, item.pci, item.numa, item.rail, item.speed = nic_name, netdev, pci, numa, rail, speed
        item.port = port
        item.in_service = nic_name not in out
        if link is None:
            item.address = item.leaf = item.leaf_port = None
        else:
            item.address, item.leaf, item.leaf_port = link.a_address, link.b_device, link.b_port
        item.__class__ = nic_class
        nics.append(item)
    key = (profile_name, id(qos), tuple(sorted(out)), None if override is None else id(override))
    shared = memo.shared.get(key)
    if shared is None:
        env = nccl_environment(spec, profile_name, nics, qos, override)
        intent = host_nic_intent(spec, name, tuple(nics), qos)
        memo.shared[key] = (env, intent)
    else:
        env, intent = shared
        intent = intent.for_host(name) if intent is not None else None
    # Host(name, profile, group, pod, mgmt, nics, nccl_env, nic_intent, description, network), built in place;
    # the network is attached afterwards (fabgen.plan.host_network).
    host = _HOST_TWIN(name, profile_name, group, pod, mgmt, tuple(nics), env, intent,
                      override.description if override else "", None)
    host.__class__ = Host
    return host  # type: ignore[no-any-return]


_blank_nic = blank(HostNic)
_HOST_TWIN = maker(Host)


def profile_nccl_environment(spec: ClusterSpec, profile_name: str, qos: QosIntent,
                             memo: HostMemo | None = None) -> tuple[tuple[str, str], ...]:
    """The NCCL variables of a host of the profile with every NIC in service and no override.

    What the profile's shared ``nccl.conf`` holds (:mod:`fabgen.targets.nccl.env`);
    a host whose own :attr:`Host.nccl_env` differs gets a file of its own. Taken
    from ``memo`` when such a host was planned, so 3,000 plain hosts cost nothing more.
    """
    shared = memo.shared.get((profile_name, id(qos), (), None)) if memo is not None else None
    if shared is not None:
        return shared[0]
    profile = spec.host_profiles[profile_name]
    nics = [HostNic(n.name, n.netdev, n.pci, n.numa, n.rail, n.speed, n.port, True, None, None, None)
            for n in (*profile.backend_nics(), *(n for n in profile.nics if n.rail is None))]
    return nccl_environment(spec, profile_name, nics, qos, None)


NCCL_RAIL_FIELDS_SINCE = (2, 30, 7)
"""``NCCL_IB_HCA`` entries ``name:port:rail`` (and ``<net rail>``) are read from 2.30.7 on."""
NCCL_FIFO_TC_SINCE = (2, 22, 3)
"""NCCL_IB_FIFO_TC exists from 2.22.3 (NVIDIA/nccl PR #1194)."""
NCCL_GIN_TC_SINCE = (2, 30, 7)
NCCL_GID_AUTO_SINCE = (2, 21, 0)
ROCEV2_IPV4_GID_INDEX = 3
"""mlx5's default GID table per port: 0/1 RoCEv1/v2 link-local, 2/3 RoCEv1/v2 of the first IPv4 address."""


QPS_PER_CONNECTION_WITH_QP_HASH = 4
"""QPs per connection when switches hash on the RoCE destination QP (E-ECMP).

Meta's E-ECMP (SIGCOMM 2024, "A RoCE network for distributed AI training at scale")
pairs switch hashing on the BTH destination QP with NCCL opening several QPs per
connection, and reports up to +40% AllReduce over ECMP without QP scaling. NCCL's
default of 1 gives the switch one QP number per connection to hash, which defeats
the scheme. The public accounts (Meta's engineering post, summaries of the paper) give
no count; 4 is fabgen's choice, as examples/meta-24k had set by hand: it quadruples
the flows each connection offers the hash, while each QP still carries large messages
(NCCL hands a connection's messages to its QPs in turn, so more QPs mean fewer, not
smaller, messages per QP) and NIC QP state stays small (x4 per peer). Set
NCCL_IB_QPS_PER_CONNECTION in ``nccl.env`` to choose another count; lint FG411 flags 1."""
NCCL_SPLIT_DEFAULT_OFF_SINCE = (2, 20, 0)
"""NCCL_IB_SPLIT_DATA_ON_QPS defaults to 0 (round-robin) from 2.20; 2.18 and 2.19 split by default."""


def qp_scaling(version: tuple[int, ...]) -> dict[str, str]:
    """The variables that make NCCL offer a QP-hashing fabric several QPs per connection.

    Round-robin (``NCCL_IB_SPLIT_DATA_ON_QPS=0``), not splitting: Meta found that posting
    each message whole to the next QP beats cutting every message across all QPs
    (smaller messages, more ACKs) at NCCL's production message sizes. It is written only
    for the NCCL versions whose default is to split (2.18, 2.19).
    """
    env = {"NCCL_IB_QPS_PER_CONNECTION": str(QPS_PER_CONNECTION_WITH_QP_HASH)}
    if version < NCCL_SPLIT_DEFAULT_OFF_SINCE:
        env["NCCL_IB_SPLIT_DATA_ON_QPS"] = "0"
    return env


def nccl_environment(spec: ClusterSpec, profile_name: str, nics: list[HostNic], qos: QosIntent,
                     override: HostOverride | None) -> tuple[tuple[str, str], ...]:
    """The NCCL variables of one host, in file order, values exactly as NCCL will read them.

    Derived first, hand-set ones (``nccl.env``, then the host's override) last, so a
    hand-set value replaces a derived one in place. Only variables the host's NCCL
    version reads are derived: a variable NCCL does not know is silently ignored,
    which hides mistakes (shared/reference/nccl.md §3).
    """
    version = parse_version(spec.nccl.version)
    with_rails = version >= NCCL_RAIL_FIELDS_SINCE
    # Exact names (=) so mlx5_1 cannot also match mlx5_10; ports always; only backend
    # NICs in service, in rail order (the order is for people: NCCL sorts devices itself).
    hca = ",".join(
        f"{n.name}:{n.port}:{n.rail}" if with_rails else f"{n.name}:{n.port}"
        for n in nics if n.rail is not None and n.in_service
    )
    tc = traffic_class(spec, qos)
    profile = spec.host_profiles[profile_name]
    env: dict[str, str] = {
        "NCCL_IB_HCA": f"={hca}",
        "NCCL_IB_TC": str(tc),
    }
    # The receiver's credit/CTS QP: its own TC only for a class the switches serve strictly.
    # Without one, NCCL already uses NCCL_IB_TC there, and FIFO_TC=TC would change nothing.
    fifo = fifo_class(qos)
    if fifo is not None and version >= NCCL_FIFO_TC_SINCE:
        env["NCCL_IB_FIFO_TC"] = str(class_tos(spec, fifo))
    if spec.fabric.load_balancing.roce_qp_hash:
        env.update(qp_scaling(version))
    if version >= NCCL_GIN_TC_SINCE:
        env["NCCL_GIN_IB_TC"] = str(tc)
    env["NCCL_SOCKET_IFNAME"] = f"={profile.frontend.netdev}"
    env["NCCL_TOPO_FILE"] = topology_file_path(spec)
    cross_nic = spec.nccl.cross_nic
    if cross_nic is None and spec.fabric.rails > 1:
        cross_nic = 0  # rail-optimized: pair same-rail NICs so traffic stays on the rail's leaves
    if cross_nic is not None:
        env["NCCL_CROSS_NIC"] = str(cross_nic)
    if version < NCCL_GID_AUTO_SINCE:
        # Older NCCL uses GID 0 (RoCEv1, link-local) unless told: the classic RoCE failure.
        env["NCCL_IB_GID_INDEX"] = str(ROCEV2_IPV4_GID_INDEX)
    else:
        # NCCL picks the GID itself; steer it to RoCEv2 and the backend's addresses.
        env["NCCL_IB_ROCE_VERSION_NUM"] = "2"
        env["NCCL_IB_ADDR_RANGE"] = str(spec.fabric.addressing.p2p)
    for source in (spec.nccl.env, override.nccl_env if override else {}):
        for key, value in sorted(source.items()):  # spec order carries no meaning
            env[key] = format_value(value)
    return tuple(env.items())

