"""Per-profile NCCL topology intent: the tree ``nccl-topo.xml`` prints.

NCCL merges ``NCCL_TOPO_FILE`` with what it detects, and the file wins: every
attribute written here replaces detection. So the intent carries only what the
spec knows for certain (placement under CPUs and PCIe switches, classes, link
speed and width, the NUMA node's CPU mask) and, in ``full`` mode, the GPU and
NIC facts NCCL would otherwise read from NVML and the net plugin.

Every string NCCL parses is produced here, in NCCL's own spelling
(``shared/reference/nccl.md`` §1.3), so the template only prints:

* ``affinity`` is the NUMA node's cpumap exactly as
  ``/sys/devices/system/node/nodeN/cpumap`` prints it;
* ``link_speed`` is a key of NCCL's ``kvDictPciGen`` (any other string silently
  becomes 8 GT/s);
* ``class`` values are the ones NCCL prefix-matches in ``kvDictPciClass``.

Pure: no I/O; the same spec gives the same tree, in spec order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # annotations only: importing the pydantic models costs the cached one-device path
    from fabgen.spec import ClusterSpec
    from fabgen.spec.hosts import Cpu, Gpu, HostProfile, Nic, PcieSwitch, PciLink

BRIDGE_CLASS = "0x060400"
"""PCI-to-PCI bridge: what NCCL reads as a PCIe switch."""
GPU_CLASS = "0x030200"
"""3D controller, the class of data-centre GPUs (H100, A100); NCCL takes any ``0x03....`` as a GPU."""
NIC_CLASSES: dict[str, str] = {"rocev2": "0x020000"}
"""Ethernet controller for RoCE NICs (an InfiniBand HCA would be ``0x020700``; NCCL takes any ``0x02....``)."""

LINK_SPEEDS: dict[int, str] = {
    3: "8.0 GT/s PCIe",
    4: "16.0 GT/s PCIe",
    5: "32.0 GT/s PCIe",
    6: "64.0 GT/s PCIe",
}
"""PCIe generation -> the ``kvDictPciGen`` key of current kernels' ``max_link_speed`` strings."""

UNKNOWN_PCI_ID = "0xffff"
"""vendor/device/subsystem ids written for a PCIe switch whose profile gives none.

NCCL fills a missing id from sysfs whenever the bus id exists on the host, and the id
changes what NCCL does: vendor ``0x1000`` (Broadcom) starts ``pcilink`` discovery
(xml.cc) and Broadcom Gen4/Gen5 device ids make it flatten a two-level switch
(``getBcmGen``, topo.cc). The file fabgen writes describes one flat switch, so it
pins the ids to ``0xffff``, "no such device" (the PCI config-space read of an
absent function, and what AWS's published topology files write), which matches
none of NCCL's special cases on every host alike. Azure's files write ``0x0000``
to the same effect."""

RAIL_ATTR_SINCE = (2, 30, 7)
"""``<net rail>`` is read from NCCL 2.30.7 on; older versions ignore it, so it is not written."""

CPUMAP_WORD_BITS = 32

TopologyMode = Literal["pci", "full"]


@dataclass(frozen=True, slots=True)
class GpuIntent:
    """``<gpu dev sm>``. Never ``rank`` (NCCL overwrites it with the communicator rank)
    nor ``gdr`` (a file value wins over detection: 0 disables GPU Direct RDMA, 1 forces
    it on hosts where the peer-memory module is missing)."""

    dev: int
    """NVML device index (``nvidia-smi`` order), which is what NCCL stores in ``dev``."""
    sm: int


@dataclass(frozen=True, slots=True)
class NetIntent:
    """``<nic><net name port speed rail?/></nic>``; ``dev`` is left to NCCL, which always overwrites it."""

    name: str
    port: int
    speed: int
    """Mb/s, as NCCL's net plugins report it (400G -> 400000)."""
    rail: int | None
    """Written only for NCCL >= 2.30.7 (None otherwise)."""


@dataclass(frozen=True, slots=True)
class PciIntent:
    """One ``<pci>`` element: a PCIe switch (with children) or a GPU/NIC leaf."""

    busid: str
    pci_class: str
    link_speed: str
    link_width: int
    children: tuple[PciIntent, ...] = ()
    ids: tuple[str, str, str, str] | None = None
    """``vendor``, ``device``, ``subsystem_vendor``, ``subsystem_device`` of a PCIe switch; None on leaves
    (NCCL reads a GPU's or NIC's own ids)."""
    gpu: GpuIntent | None = None
    net: NetIntent | None = None
    label: str = ""
    """What the element is in the spec (``GPU 0``, ``mlx5_0``, ``switch sw0``); for people, not NCCL."""


@dataclass(frozen=True, slots=True)
class CpuIntent:
    """One ``<cpu>`` element: a NUMA node and everything attached below it."""

    numaid: int
    affinity: str | None
    """cpumap of the node, or None when the spec gives no cpulist (NCCL then reads sysfs)."""
    arch: str
    vendor: str | None
    familyid: int | None
    modelid: int | None
    children: tuple[PciIntent, ...]


@dataclass(frozen=True, slots=True)
class TopologyIntent:
    """Everything ``nccl-topo.xml`` of one host profile says."""

    cluster: str
    profile: str
    mode: TopologyMode
    nccl_version: str
    cpus: tuple[CpuIntent, ...]
    node_count: int
    """XML nodes NCCL will count for this file (``<system>`` included); NCCL's budget is 256 per rank."""
    comment: str
    """Text of the file's leading XML comment (never contains ``--``, which XML forbids there)."""


# --------------------------------------------------------------------------- helpers


def parse_cpulist(cpulist: str) -> list[int]:
    """``"0-3,8"`` -> ``[0, 1, 2, 3, 8]`` (sorted, unique). Raises ValueError on a reversed range."""
    cpus: set[int] = set()
    for part in cpulist.split(","):
        low, _, high = part.partition("-")
        first, last = int(low), int(high or low)
        if last < first:
            raise ValueError(f"cpulist range {part} runs backwards")
        cpus.update(range(first, last + 1))
    return sorted(cpus)


def cpumap(cpus: list[int] | set[int], nr_cpus: int) -> str:
    """The Linux cpumap of ``cpus`` on a machine with ``nr_cpus`` CPU ids.

    Same text as the kernel's ``%*pb`` (``bitmap_string``): 32-bit words in
    lower-case hex, most significant first, separated by commas; the leading word
    is as wide as the bits left over (``nr_cpus=96`` -> three 8-digit words,
    ``nr_cpus=20`` -> ``fffff``). NCCL's parser (``ncclStrToCpuset``) reads any
    width, but matching sysfs byte for byte keeps the file diffable against a dump.
    """
    if nr_cpus <= 0:
        raise ValueError("nr_cpus must be positive")
    if cpus and max(cpus) >= nr_cpus:
        raise ValueError(f"CPU {max(cpus)} is beyond nr_cpus={nr_cpus}")
    mask = 0
    for cpu in cpus:
        mask |= 1 << cpu
    words = (nr_cpus + CPUMAP_WORD_BITS - 1) // CPUMAP_WORD_BITS
    lead_bits = nr_cpus % CPUMAP_WORD_BITS or CPUMAP_WORD_BITS
    parts = []
    for index in range(words - 1, -1, -1):
        word = (mask >> (index * CPUMAP_WORD_BITS)) & 0xFFFFFFFF
        width = (lead_bits + 3) // 4 if index == words - 1 else 8
        parts.append(f"{word:0{width}x}")
    return ",".join(parts)


def link_speed(gen: int) -> str:
    """NCCL's string for a PCIe generation (``5`` -> ``"32.0 GT/s PCIe"``)."""
    try:
        return LINK_SPEEDS[gen]
    except KeyError:
        raise ValueError(f"no NCCL link_speed string for PCIe gen {gen}") from None


def nic_class(transport: str) -> str:
    """PCI class written for the profile's NICs on this cluster transport."""
    return NIC_CLASSES[transport]


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def _affinities(profile: HostProfile) -> dict[int, str | None]:
    """cpumap per NUMA node; the bitmap width is the machine's CPU count (highest id + 1)."""
    lists = {cpu.numa: parse_cpulist(cpu.cpus) if cpu.cpus else None for cpu in profile.cpus}
    known = [c for cpus in lists.values() if cpus for c in cpus]
    if not known:
        return dict.fromkeys(lists)
    nr_cpus = max(known) + 1
    return {numa: cpumap(cpus, nr_cpus) if cpus is not None else None for numa, cpus in lists.items()}


# --------------------------------------------------------------------------- building


@dataclass(frozen=True, slots=True)
class _Builder:
    """The per-profile facts every element needs."""

    full: bool
    nic_class: str
    with_rail: bool

    def link(self, link: PciLink) -> tuple[str, int]:
        return link_speed(link.gen), link.width

    def gpu(self, gpu: Gpu) -> PciIntent:
        speed, width = self.link(gpu.link)
        detail = GpuIntent(dev=gpu.index, sm=gpu.sm) if self.full else None
        return PciIntent(gpu.pci, GPU_CLASS, speed, width, gpu=detail, label=f"GPU {gpu.index}")

    def nic(self, nic: Nic) -> PciIntent:
        speed, width = self.link(nic.link)
        detail = None
        if self.full and nic.rail is not None:
            # Only backend NICs: NCCL_IB_HCA lists nothing else, so a <net> for another
            # NIC would be trimmed by NCCL anyway and only cost nodes.
            detail = NetIntent(name=nic.name, port=nic.port, speed=nic.speed * 1000,
                               rail=nic.rail if self.with_rail else None)
        return PciIntent(nic.pci, self.nic_class, speed, width, net=detail, label=nic.name)

    def switch(self, switch: PcieSwitch, gpus: dict[int, Gpu], nics: dict[str, Nic]) -> PciIntent:
        speed, width = self.link(switch.link)
        children = tuple(self.gpu(gpus[i]) for i in switch.gpus) + tuple(self.nic(nics[n]) for n in switch.nics)
        given = switch.pci_ids
        ids = (given.vendor, given.device, given.subsystem_vendor, given.subsystem_device) if given else \
            (UNKNOWN_PCI_ID,) * 4
        return PciIntent(switch.busid, BRIDGE_CLASS, speed, width, children=children, ids=ids,
                         label=f"switch {switch.name}")

    def cpu(self, cpu: Cpu, affinity: str | None, children: tuple[PciIntent, ...]) -> CpuIntent:
        return CpuIntent(numaid=cpu.numa, affinity=affinity, arch=cpu.arch, vendor=cpu.vendor,
                         familyid=cpu.family, modelid=cpu.model, children=children)


def _count(node: PciIntent) -> int:
    own = 1 + (1 if node.gpu else 0) + (2 if node.net else 0)  # <gpu>; <nic> + <net>
    return own + sum(_count(child) for child in node.children)


def topology_intent(spec: ClusterSpec, profile_name: str) -> TopologyIntent:
    """The topology tree of one host profile.

    Under each ``<cpu>``: the profile's PCIe switches on that NUMA node (each with
    its GPUs, then its NICs, in the order the switch lists them), then the GPUs and
    NICs attached to no switch, in profile order. A device sits under its switch's
    CPU, whatever its own ``numa`` says (the switch is where it is wired).
    """
    profile = spec.host_profiles[profile_name]
    builder = _Builder(
        full=spec.nccl.topology == "full",
        nic_class=nic_class(spec.cluster.transport),
        with_rail=_version(spec.nccl.version) >= RAIL_ATTR_SINCE,
    )
    gpus = {g.index: g for g in profile.gpus}
    nics = {n.name: n for n in profile.nics}
    switched_gpus = {i for s in profile.pcie_switches for i in s.gpus}
    switched_nics = {n for s in profile.pcie_switches for n in s.nics}
    affinity = _affinities(profile)

    cpus = []
    for cpu in profile.cpus:
        children = [builder.switch(s, gpus, nics) for s in profile.pcie_switches if s.numa == cpu.numa]
        children += [builder.gpu(g) for g in profile.gpus if g.numa == cpu.numa and g.index not in switched_gpus]
        children += [builder.nic(n) for n in profile.nics if n.numa == cpu.numa and n.name not in switched_nics]
        cpus.append(builder.cpu(cpu, affinity[cpu.numa], tuple(children)))

    nodes = 1 + sum(1 + sum(_count(child) for child in cpu.children) for cpu in cpus)
    return TopologyIntent(cluster=spec.cluster.name, profile=profile_name, mode=spec.nccl.topology,
                          nccl_version=spec.nccl.version, cpus=tuple(cpus), node_count=nodes,
                          comment=_comment(spec.cluster.name, profile_name))


def _comment(cluster: str, profile: str) -> str:
    """Who wrote the file, for the operator who finds it on a host. Names are legal with
    ``--`` in them, which an XML comment cannot hold; then the names are left out."""
    tail = "edit the spec, not this file"
    if "--" in cluster or "--" in profile:
        return f"generated by fabgen; {tail}"
    return f"generated by fabgen for cluster {cluster}, host profile {profile}; {tail}"


__all__ = [
    "BRIDGE_CLASS",
    "GPU_CLASS",
    "LINK_SPEEDS",
    "NIC_CLASSES",
    "UNKNOWN_PCI_ID",
    "CpuIntent",
    "GpuIntent",
    "NetIntent",
    "PciIntent",
    "TopologyIntent",
    "cpumap",
    "link_speed",
    "nic_class",
    "parse_cpulist",
    "topology_intent",
]
