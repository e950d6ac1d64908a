"""FG2xx rails: the planned cabling and the hosts' view of it.

A rail-optimized fabric works when NIC *r* of every host reaches a leaf of rail
*r*, sits next to GPU *r*, and NCCL is told which NIC is which. The planner
lays this out itself; these rules catch what explicit cabling, host overrides
and hand-set NCCL variables can break.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fabgen.lint.context import OS_NAMES, LintContext, MemoKey, hosts_phrase
from fabgen.lint.finding import Hit
from fabgen.plan.ports import model_port_name
from fabgen.source import DataPath

if TYPE_CHECKING:
    from fabgen.plan.model import Link
    from fabgen.spec.hosts import HostProfile, Nic
    from fabgen.targets.nccl.variables import IfEntry


def rail_crossing(ctx: LintContext) -> Iterator[Hit]:
    """A host NIC of one rail is cabled to a leaf of another rail.

    What it checks:
        Every planned host-leaf link (explicit ``fabric.cabling`` included): the
        NIC's rail must be the leaf's rail.

    Why it matters:
        NCCL pairs GPU *r* of one host with GPU *r* of another through NIC *r* and
        expects one leaf hop between them (``NCCL_CROSS_NIC=0``). A NIC on another
        rail's leaf forces that traffic over the spines, or cannot reach its peers
        at all when rails are separate networks (nccl.md §4.4).

    Example:
        fabric:
          cabling:
            - {a: "lab01:ens1np0", b: "leaf-r1-p00-01:Ethernet9/1"}   # ens1np0 is rail 0

    Fix:
        Cable the NIC to a leaf of its own rail, or correct the NIC's ``rail`` in
        the host profile if the spec is what is wrong.
    """
    for link in ctx.plan.links:
        if link.role != "host-leaf" or link.rail is None:
            continue
        leaf = ctx.switches.get(link.b_device)
        if leaf is not None and leaf.rail is not None and leaf.rail != link.rail:
            yield Hit(
                f"{link.a_device}:{link.a_port} is on rail {link.rail} but is cabled to "
                f"{link.b_device}:{link.b_port}, a leaf of rail {leaf.rail}",
                ctx.at(ctx.link_path(link)),
                f"cable it to a leaf of rail {link.rail}",
            )


def port_double_cabled(ctx: LintContext) -> Iterator[Hit]:
    """Two cables on one port.

    What it checks:
        No switch or host port may be an end of more than one planned link. A
        spec cannot plan one any more (the loader refuses the second cable at
        its line); this guards a plan a library caller builds itself.

    Why it matters:
        A port takes one cable. Two planned links on it mean one of them will not
        exist, and its addresses, QoS and LLDP expectations are wrong.

    Example:
        fabric:
          cabling:
            - {a: "lab01:ens1np0", b: "leaf-r0-p00-01:Ethernet9/1"}
            - {a: "lab02:ens1np0", b: "leaf-r0-p00-01:Ethernet9/1"}

    Fix:
        Give each cable its own port.
    """
    for (device, port), links in ctx.shared_ends.items():
        others = ", ".join(f"{_peer(link, device, port)}" for link in links)
        yield Hit(
            f"{device}:{port} carries {len(links)} cables ({others})",
            ctx.at(ctx.link_path(links[1])),
            "give each cable its own port",
            tuple(ctx.at(ctx.link_path(link), note="another cable on this port") for link in links[:1]),
        )


def _peer(link: Link, device: str, port: str) -> str:
    if (link.a_device, link.a_port) == (device, port):
        return f"{link.b_device}:{link.b_port}"
    return f"{link.a_device}:{link.a_port}"


def port_beyond_radix(ctx: LintContext) -> Iterator[Hit]:
    """A cable on a port the switch does not have.

    What it checks:
        Every planned switch port must be named in the switch OS's scheme
        (``Ethernet7/1`` on EOS, ``Ethernet48`` on SONiC, ``swp7`` on Cumulus) and its
        number must not exceed the tier's ``ports``.

    Why it matters:
        A port beyond the radix does not exist: the configuration for it is refused
        or ignored, and the cable planned for it has nowhere to go.

    Example:
        fabric:
          cabling:
            - {a: "lab01:ens1np0", b: "leaf-r0-p00-01:Ethernet40/1"}   # 32-port leaf

    Fix:
        Use a port within the switch's radix, or correct the tier's ``ports``.
    """
    for switch in ctx.plan.switches:
        for port in switch.ports:
            if port.index and port.index <= switch.radix:
                continue
            link = ctx.link_at.get((switch.name, port.name))
            what = (f"is port {port.index} of a {switch.radix}-port switch" if port.index
                    else f"is not a port name of {OS_NAMES.get(switch.os, switch.os)} switch")
            yield Hit(
                f"{switch.name}:{port.name} {what}",
                ctx.at(ctx.link_path(link) if link else ctx.tier_path(switch.tier, "ports")),
                f"use a port between {model_port_name(switch.os, switch.model, 1, switch.speed)} and "
                f"{model_port_name(switch.os, switch.model, switch.radix, switch.speed)}",
                (ctx.at(ctx.tier_path(switch.tier, "ports"), note="tier radix"),),
            )


def host_missing_rail(ctx: LintContext) -> Iterator[Hit]:
    """A host has an in-service NIC that no cable connects.

    What it checks:
        Every in-service backend NIC of every host must be the host end of a
        planned host-leaf link. (A NIC taken out of service with
        ``nics_out_of_service`` is fine: NCCL stops using it.)

    Why it matters:
        NCCL still lists the NIC in ``NCCL_IB_HCA`` and assigns GPUs to it; with no
        link its queue pairs time out and the job hangs at init. This happens when
        an explicit cable takes the NIC's leaf port for something else.

    Example:
        fabric:
          cabling:
            - {a: "lab02:ens1np0", b: "leaf-r0-p00-01:Ethernet1/1"}   # lab01's port

    Fix:
        Cable the NIC, or take it out of service for that host
        (``overrides: {HOST: {nics_out_of_service: [mlx5_0]}}``).
    """
    groups: dict[tuple[DataPath, int, str], list[str]] = {}
    for host in ctx.plan.hosts:
        for nic in host.nics:
            if nic.rail is not None and nic.in_service and nic.leaf is None:
                groups.setdefault((ctx.host_path(host), nic.rail, f"{nic.name} ({nic.netdev})"), []).append(host.name)
    for (path, rail, nic_label), hosts in groups.items():
        yield Hit(
            f"no link on rail {rail} for {hosts_phrase(hosts)}: NIC {nic_label} is in service but not cabled",
            ctx.at(path),
            "cable the NIC, or list it in nics_out_of_service for these hosts",
        )


@dataclass(frozen=True)
class _HcaUse:
    """A hand-set NCCL_IB_HCA value as written in one place, for the hosts of one profile it reaches."""

    path: DataPath
    raw: str
    profile: str
    hosts: list[str]
    out: dict[str, frozenset[str]]
    """Each host's NICs out of service."""


_HCA_USES: MemoKey[list[_HcaUse]] = MemoKey("NCCL_IB_HCA uses")


def _hca_uses(ctx: LintContext) -> list[_HcaUse]:
    cached = ctx.memo.get(_HCA_USES)
    if cached is not None:
        return cached
    groups: dict[tuple[DataPath, str, str], _HcaUse] = {}
    for host in ctx.plan.hosts:
        path = ctx.env_path(host, "NCCL_IB_HCA")
        if path is None:
            continue
        raw = ctx.env(host).get("NCCL_IB_HCA", "")
        use = groups.setdefault((path, raw, host.profile), _HcaUse(path, raw, host.profile, [], {}))
        use.hosts.append(host.name)
        use.out[host.name] = frozenset(n.name for n in host.nics if not n.in_service)
    uses = list(groups.values())
    ctx.memo.put(_HCA_USES, uses)
    return uses


def _matches(entry: IfEntry, nic: Nic, exact: bool) -> bool:
    name_ok = nic.name == entry.name if exact else nic.name.startswith(entry.name)
    return name_ok and entry.port in (-1, nic.port)


def hca_names_unusable_nic(ctx: LintContext) -> Iterator[Hit]:
    """A hand-set NCCL_IB_HCA uses a NIC out of service, outside the fabric, or absent.

    What it checks:
        Where ``NCCL_IB_HCA`` is set by hand (``nccl.env`` or a host override), the
        NICs it selects on each host must be in-service backend NICs, and every
        entry must name a NIC the host has.

    Why it matters:
        NCCL uses whatever the list selects. An out-of-service NIC (failed optic)
        makes its GPU's connections time out; a frontend NIC carries RDMA on the
        wrong network; an entry naming no device is silently ignored, so the list
        means something else than it says (nccl.md §4.3).

    Example:
        hosts:
          - profile: lab-node
            count: 4
            name: "lab{index:02d}"
            overrides:
              lab04:
                nics_out_of_service: [mlx5_3]
                nccl_env: {NCCL_IB_HCA: "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1"}

    Fix:
        Drop the hand-set value (fabgen derives ``NCCL_IB_HCA`` from the profile and
        the out-of-service list), or remove the NIC from it.
    """
    from fabgen.targets.nccl.variables import parse_if_list

    for use in _hca_uses(ctx):
        parsed = parse_if_list(use.raw)
        nics = ctx.spec.host_profiles[use.profile].nics
        problems: dict[str, list[str]] = {}
        if not parsed.exclude:
            for entry in parsed.entries:
                if not any(_matches(entry, nic, parsed.exact) for nic in nics):
                    problems[f"entry {entry.name!r} matches no NIC of profile {use.profile}"] = use.hosts
            used = [n for n in nics if any(_matches(e, n, parsed.exact) for e in parsed.entries)]
        else:
            used = [n for n in nics if not any(_matches(e, n, parsed.exact) for e in parsed.entries)]
        for nic in used:
            if nic.rail is None:
                problems[f"it selects {nic.name}, which is not on the RoCE fabric"] = use.hosts
                continue
            broken = [h for h in use.hosts if nic.name in use.out[h]]
            if broken:
                problems[f"it selects {nic.name}, which is out of service"] = broken
        for problem, hosts in problems.items():
            yield Hit(
                f"NCCL_IB_HCA={use.raw} on {hosts_phrase(hosts)}: {problem}",
                ctx.at(use.path, key=True),
                "remove the hand-set NCCL_IB_HCA (fabgen derives it), or list only in-service backend NICs",
            )


def nic_gpu_locality(ctx: LintContext) -> Iterator[Hit]:
    """The NIC of rail r is not next to GPU r.

    What it checks:
        In every host profile, the NIC of rail *r* and the GPU that rail serves
        (GPU *r* when there are as many GPUs as rails) must share a PCIe switch when
        ``pcie_switches`` describes them, and a NUMA node otherwise.

    Why it matters:
        NCCL gives each GPU its closest NIC. GPUDirect RDMA is fast through a shared
        PCIe switch (PIX) and slow or disabled across the CPU (PHB/SYS,
        ``NCCL_NET_GDR_LEVEL`` defaults to PXB); a rail NIC far from its GPU loses
        GPUDirect, and NCCL may pick another rail's NIC instead, crossing rails.

    Example:
        host_profiles:
          lab-node:
            nics:
              - {name: mlx5_0, netdev: ens1np0, pci: "0000:18:00.0", numa: 1, rail: 0, speed: 400G}

    Fix:
        Correct the NIC's ``rail`` (or ``numa`` / PCIe switch) to match the hardware:
        rail *r* must be the NIC that sits with GPU *r*.
    """
    rails = ctx.spec.fabric.rails
    for pname, profile in ctx.spec.host_profiles.items():
        gpus = sorted(profile.gpus, key=lambda g: g.index)
        gpu_switch = {g: s.name for s in profile.pcie_switches for g in s.gpus}
        nic_switch = {n: s.name for s in profile.pcie_switches for n in s.nics}
        for index, nic in enumerate(profile.nics):
            if nic.rail is None or nic.rail >= rails:
                continue
            gpu = gpus[nic.rail * len(gpus) // rails]
            path = ("host_profiles", pname, "nics", index)
            if gpu.index in gpu_switch and nic.name in nic_switch:
                if gpu_switch[gpu.index] != nic_switch[nic.name]:
                    yield Hit(
                        f"profile {pname}: {nic.name} (rail {nic.rail}) is under PCIe switch {nic_switch[nic.name]}, "
                        f"GPU {gpu.index} under {gpu_switch[gpu.index]}: no GPUDirect path between them",
                        ctx.at(path),
                        f"make rail {nic.rail} the NIC that shares a PCIe switch with GPU {gpu.index}",
                    )
            elif nic.numa != gpu.numa:
                yield Hit(
                    f"profile {pname}: {nic.name} (rail {nic.rail}) is on NUMA node {nic.numa}, GPU {gpu.index} on "
                    f"{gpu.numa}: traffic crosses the CPU interconnect",
                    ctx.at(path),
                    f"make rail {nic.rail} a NIC on NUMA node {gpu.numa}",
                )


def _entries_in_use(ctx: LintContext) -> Iterator[tuple[_HcaUse, list[tuple[IfEntry, Nic]]]]:
    """(use, [(entry, profile NIC)]) for exact-name, non-exclude hand-set lists."""
    from fabgen.targets.nccl.variables import parse_if_list

    for use in _hca_uses(ctx):
        parsed = parse_if_list(use.raw)
        if parsed.exclude:
            continue
        nics = ctx.spec.host_profiles[use.profile].nics
        pairs: list[tuple[IfEntry, Nic]] = []
        for entry in parsed.entries:
            for nic in nics:
                if _matches(entry, nic, parsed.exact):
                    pairs.append((entry, nic))
        yield use, pairs


def hca_rail_mismatch(ctx: LintContext) -> Iterator[Hit]:
    """A hand-set NCCL_IB_HCA gives a NIC another rail than the profile.

    What it checks:
        For NCCL >= 2.30.7, which reads ``name:port:rail``, the rail field of each
        hand-set ``NCCL_IB_HCA`` entry must be the NIC's ``rail`` in the host profile.

    Why it matters:
        With ``NCCL_CROSS_NIC=0`` NCCL only pairs NICs of the same rail id. A wrong id
        makes it pair NICs that sit on different leaves, whose traffic then crosses
        the spines or cannot connect (nccl.md §4.4).

    Example:
        nccl:
          version: 2.30.7
          env: {NCCL_IB_HCA: "=mlx5_0:1:1,mlx5_1:1:0,mlx5_2:1:2,mlx5_3:1:3"}

    Fix:
        Drop the hand-set value (fabgen writes the rails from the profile), or make
        each entry's rail the profile's.
    """
    from fabgen.targets.nccl.variables import RAIL_FIELDS_SINCE

    if ctx.nccl_version < RAIL_FIELDS_SINCE:
        return
    for use, pairs in _entries_in_use(ctx):
        for entry, nic in pairs:
            if entry.rail >= 0 and nic.rail is not None and entry.rail != nic.rail:
                yield Hit(
                    f"NCCL_IB_HCA on {hosts_phrase(use.hosts)} gives {nic.name} rail "
                    f"{entry.rail}, but profile {use.profile} cables it to rail {nic.rail}",
                    ctx.at(use.path, key=True),
                    f"write {nic.name}:{nic.port}:{nic.rail}",
                )


def hca_rail_order(ctx: LintContext) -> Iterator[Hit]:
    """A hand-set NCCL_IB_HCA does not list NICs in rail order.

    What it checks:
        The backend NICs a hand-set ``NCCL_IB_HCA`` names must appear in the order of
        their rails in the host profile.

    Why it matters:
        NCCL itself ignores the order (it sorts devices by PCI path), but people
        read the list as the rail map of the host, and a list out of rail order is
        usually one copied from another kind of host, with other NIC names or rails.

    Example:
        nccl:
          env: {NCCL_IB_HCA: "=mlx5_1:1,mlx5_0:1,mlx5_2:1,mlx5_3:1"}

    Fix:
        List the NICs rail 0 first, or drop the hand-set value: fabgen derives it in
        rail order.
    """
    for use, pairs in _entries_in_use(ctx):
        rails = [nic.rail for _, nic in pairs if nic.rail is not None]
        if rails != sorted(rails):
            order = ", ".join(f"{nic.name} (rail {nic.rail})" for _, nic in pairs if nic.rail is not None)
            yield Hit(
                f"NCCL_IB_HCA on {hosts_phrase(use.hosts)} lists NICs out of rail "
                f"order: {order}",
                ctx.at(use.path, key=True),
                "list the NICs in rail order, or drop the value",
            )


def _rail_gpus(profile: HostProfile, rails: int) -> tuple[tuple[int, ...], ...]:
    """For each rail, the GPUs local to its NIC: same PCIe switch when described, else same NUMA node."""
    by_switch = {n: set(s.gpus) for s in profile.pcie_switches for n in s.nics}
    out: list[tuple[int, ...]] = []
    for rail in range(rails):
        nic = next((n for n in profile.nics if n.rail == rail), None)
        if nic is None:
            out.append(())
        elif nic.name in by_switch:
            out.append(tuple(sorted(by_switch[nic.name])))
        else:
            out.append(tuple(sorted(g.index for g in profile.gpus if g.numa == nic.numa)))
    return tuple(out)


def heterogeneous_hosts(ctx: LintContext) -> Iterator[Hit]:
    """Hosts of different profiles map rails to GPUs differently.

    What it checks:
        Every host profile in use must put the NIC of each rail next to the same
        GPUs (by PCIe switch when described, else by NUMA node). Profiles that
        differ from the mapping most hosts use are reported.

    Why it matters:
        NCCL builds rings and trees assuming GPU *g* talks to the network through
        the same rail on every host. Where one kind of host wires GPU 0 to rail 1,
        rail-aligned traffic crosses rails, or NCCL hangs on mismatched
        topologies (nccl.md §4.11).

    Example:
        host_profiles:
          node-a: {...}        # mlx5_0 on rail 0 next to GPU 0
          node-b: {...}        # mlx5_0 on rail 0 next to GPU 1

    Fix:
        Give the odd profile's NICs the rails that match the others (rail *r* next
        to GPU *r*), or run the kinds of host as separate jobs.
    """
    rails = ctx.spec.fabric.rails
    counts = Counter(h.profile for h in ctx.plan.hosts)
    maps = {p: _rail_gpus(ctx.spec.host_profiles[p], rails) for p in counts}
    if len(set(maps.values())) < 2:
        return
    weight: Counter[tuple[tuple[int, ...], ...]] = Counter()
    for profile, mapping in maps.items():
        weight[mapping] += counts[profile]
    common = max(weight, key=lambda m: (weight[m], m))
    reference = next(p for p in sorted(maps) if maps[p] == common)
    for profile in sorted(maps):
        mapping = maps[profile]
        if mapping == common:
            continue
        rail = next(r for r in range(rails) if mapping[r] != common[r])
        yield Hit(
            f"profile {profile} puts rail {rail} next to GPU(s) {_gpus(mapping[rail])}, profile {reference} next to "
            f"{_gpus(common[rail])}: hosts of the two kinds disagree on which GPU uses which rail",
            ctx.at(("host_profiles", profile, "nics")),
            "give every profile the same rail-to-GPU mapping",
            (ctx.at(("host_profiles", reference, "nics"), note=f"profile {reference}"),),
        )


def _gpus(values: tuple[int, ...]) -> str:
    return ", ".join(map(str, values)) or "none"


def uneven_uplinks(ctx: LintContext) -> Iterator[Hit]:
    """A switch's uplinks are not spread evenly over the switches above it.

    What it checks:
        Every leaf must reach each spine of its pod (every spine in a 2-tier
        fabric), and every spine of a 3-tier fabric each super-spine of its plane,
        over the same number of links.

    Why it matters:
        ECMP hashes flows evenly over next hops, not over bandwidth: a spine reached
        over two links gets the same share as one reached over one, so one link runs
        at twice the load while another idles, and a missing spine loses its share
        of the paths. RoCE flows are few and large (elephants), so the imbalance
        shows directly in collective bandwidth.

    Example:
        fabric:
          cabling:
            - {a: "leaf-r0-p00-01:Ethernet5/1", b: "spine-01:Ethernet20/1"}   # was to spine-02

    Fix:
        Give every upstream switch the same number of links from each switch below.
    """
    layout = ctx.plan.layout
    spines_by_pod: dict[int | None, list[str]] = {}
    supers_by_plane: dict[int | None, list[str]] = {}
    for switch in ctx.plan.switches:
        if switch.tier == "spine":
            spines_by_pod.setdefault(switch.pod, []).append(switch.name)
        elif switch.tier == "super_spine":
            supers_by_plane.setdefault(switch.plane, []).append(switch.name)
    for switch in ctx.plan.switches:
        if switch.tier == "leaf":
            expected = spines_by_pod.get(switch.pod if layout.tiers == 3 else None, [])
        elif switch.tier == "spine" and layout.tiers == 3:
            expected = supers_by_plane.get(switch.plane, [])
        else:
            continue
        counts = Counter(p.peer_device for p in switch.ports if p.direction == "up")
        if not expected:
            continue
        spread = {name: counts.get(name, 0) for name in expected}
        extra = sorted(set(counts) - set(expected))
        if len(set(spread.values())) <= 1 and not extra:
            continue
        shown = ", ".join(f"{n} x{c}" for n, c in sorted(spread.items(), key=lambda i: (i[1], i[0]))[:4])
        if extra:
            shown += "; outside its group: " + ", ".join(extra)
        near = next((path for ends, path in ctx.cable_paths.items() if any(d == switch.name for d, _ in ends)), None)
        yield Hit(
            f"{switch.name}: uplinks are uneven ({shown}); ECMP splits flows evenly per next hop, not per link",
            ctx.at(near if near is not None else ctx.tier_path(switch.tier)),
            "give each upstream switch the same number of links",
        )


def link_speed_mismatch(ctx: LintContext) -> Iterator[Hit]:
    """The two ends of a link have different speeds.

    What it checks:
        A backend NIC's speed must equal the leaf tier's port speed; a leaf's
        speed must equal the spine's, and a spine's the super-spine's.

    Why it matters:
        fabgen runs such a link at the lower speed, but the faster end's port is
        planned (lanes, optics, buffer headroom) for its own speed: ports come up
        only with matching optics and breakout settings, and the faster side's
        bandwidth is lost.

    Example:
        host_profiles:
          lab-node:
            nics:
              - {name: mlx5_0, netdev: ens1np0, pci: "0000:18:00.0", numa: 0, rail: 0, speed: 200G}

    Fix:
        Make both ends' speeds agree (tier ``speed`` and NIC ``speed``).
    """
    tiers = ctx.spec.fabric.tiers
    used = {h.profile for h in ctx.plan.hosts}
    for pname in sorted(used):
        for index, nic in enumerate(ctx.spec.host_profiles[pname].nics):
            if nic.rail is not None and nic.speed != tiers.leaf.speed:
                yield Hit(
                    f"profile {pname}: {nic.name} runs at {nic.speed}G, its leaf ports at {tiers.leaf.speed}G",
                    ctx.at(ctx.first_written(("host_profiles", pname, "nics", index, "speed"),
                                             ("host_profiles", pname, "nics", index))),
                    "make the NIC and the leaf tier speeds agree",
                    (ctx.at(ctx.tier_path("leaf", "speed"), note="leaf speed"),),
                )
    pairs = [("leaf", tiers.leaf, "spine", tiers.spine)]
    if tiers.super_spine is not None:
        pairs.append(("spine", tiers.spine, "super_spine", tiers.super_spine))
    for low_name, low, high_name, high in pairs:
        if low.speed != high.speed:
            yield Hit(
                f"{low_name} ports run at {low.speed}G, {high_name.replace('_', '-')} ports at {high.speed}G: "
                "the links between them run at the lower speed",
                ctx.at(ctx.first_written(ctx.tier_path(high_name, "speed"), ctx.tier_path(high_name))),
                "make the tier speeds agree",
                (ctx.at(ctx.first_written(ctx.tier_path(low_name, "speed"), ctx.tier_path(low_name)),
                        note=f"{low_name} speed"),),
            )
