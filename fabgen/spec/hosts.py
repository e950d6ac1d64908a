"""Host profiles (what one server looks like inside) and host groups (how many)."""

import re
from collections.abc import Hashable, Sequence
from typing import Annotated, Literal, Self

from pydantic import Field, StringConstraints, field_validator, model_validator

from fabgen.spec.common import BusId, CpuList, Description, Name, Netdev, RdmaDevice, SpecModel, pattern_fields
from fabgen.spec.host_network import BackendNetwork
from fabgen.spec.nccl import NcclEnv
from fabgen.units import Speed

PcieGen = Literal[3, 4, 5, 6]


class Cpu(SpecModel):
    """One NUMA node's CPU complex, as NCCL's ``<cpu>`` element needs it."""

    numa: Annotated[int, Field(ge=0, le=63)]
    arch: Literal["x86_64", "arm64", "ppc64"] = "x86_64"
    vendor: Literal["GenuineIntel", "AuthenticAMD", "CentaurHauls"] | None = None
    family: Annotated[int, Field(ge=0, le=255)] | None = None
    model: Annotated[int, Field(ge=0, le=255)] | None = None
    cpus: CpuList | None = None
    """Logical CPUs of this NUMA node (cpulist form); NCCL's affinity mask is computed from it."""

    @model_validator(mode="after")
    def _cpuid_complete(self) -> Self:
        if self.arch == "x86_64" and self.vendor is None:
            raise ValueError("an x86_64 CPU needs 'vendor' (NCCL requires it)")
        if self.vendor == "GenuineIntel" and (self.family is None or self.model is None):
            raise ValueError("an Intel CPU needs 'family' and 'model' (NCCL picks inter-socket bandwidth from them)")
        return self


class PciLink(SpecModel):
    gen: PcieGen = 5
    width: Literal[1, 2, 4, 8, 16] = 16


class Gpu(SpecModel):
    index: Annotated[int, Field(ge=0, le=63)]
    pci: BusId
    numa: Annotated[int, Field(ge=0, le=63)]
    sm: Annotated[int, Field(ge=30, le=200)] = 90
    """Compute capability x10 (90 for H100)."""
    link: PciLink = PciLink()


class Nic(SpecModel):
    name: RdmaDevice
    """RDMA device (``mlx5_0``): what NCCL_IB_HCA lists."""
    netdev: Netdev
    """Kernel interface (``ens1np0``): what LLDP reports and the QoS tools configure."""
    pci: BusId
    numa: Annotated[int, Field(ge=0, le=63)]
    rail: Annotated[int, Field(ge=0, le=63)] | None = None
    """Backend rail this NIC is cabled to; omit for a NIC outside the RoCE fabric."""
    speed: Speed = "400G"  # type: ignore[assignment]  # spec text; validate_default parses it to 400
    port: Annotated[int, Field(ge=1, le=8)] = 1
    """RDMA port number used by NCCL (``mlx5_0:1``)."""
    link: PciLink = PciLink()


PciIdValue = Annotated[str, StringConstraints(pattern=r"^0x[0-9a-f]{4}$")]
"""A 16-bit PCI id as sysfs prints it and NCCL's dumps carry it (``0x1000``)."""


class PciIds(SpecModel):
    """The switch's PCI ids (``lspci -n``, or sysfs ``vendor``/``device``/``subsystem_*``), as NCCL dumps them."""

    vendor: PciIdValue
    device: PciIdValue
    subsystem_vendor: PciIdValue
    subsystem_device: PciIdValue


class PcieSwitch(SpecModel):
    """A PCIe switch shared by GPUs and NICs (NCCL's PIX distance)."""

    name: Name
    numa: Annotated[int, Field(ge=0, le=63)]
    busid: BusId
    """Bus id of the switch in NCCL's topology file; a made-up id such as ``ffff:ff:01.0`` is fine."""
    link: PciLink = PciLink()
    pci_ids: PciIds | None = None
    """The real switch's ids; omitted, the topology file writes ``0xffff`` for all four (see
    :data:`fabgen.plan.topology.UNKNOWN_PCI_ID`)."""
    gpus: list[Annotated[int, Field(ge=0, le=63)]] = []
    nics: list[RdmaDevice] = []


class Frontend(SpecModel):
    netdev: Netdev
    """Interface for NCCL's bootstrap and out-of-band traffic (NCCL_SOCKET_IFNAME)."""


class HostProfile(SpecModel):
    description: Description = ""
    cpus: Annotated[list[Cpu], Field(min_length=1)]
    gpus: Annotated[list[Gpu], Field(min_length=1, max_length=64)]
    nics: Annotated[list[Nic], Field(min_length=1, max_length=32)]
    pcie_switches: list[PcieSwitch] = []
    frontend: Frontend
    backend_network: BackendNetwork = BackendNetwork()

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        numas = [c.numa for c in self.cpus]
        _unique(numas, "NUMA node")
        _unique([g.index for g in self.gpus], "GPU index")
        _unique([n.name for n in self.nics], "NIC name")
        _unique([n.netdev for n in self.nics], "NIC netdev")
        pci_devices: tuple[Gpu | Nic, ...] = (*self.gpus, *self.nics)
        _unique([d.pci for d in pci_devices] + [s.busid for s in self.pcie_switches], "PCI bus id")
        _unique([s.name for s in self.pcie_switches], "PCIe switch name")
        for device in (*pci_devices, *self.pcie_switches):
            if device.numa not in numas:
                label = getattr(device, "name", None) or f"GPU {getattr(device, 'index', '?')}"
                raise ValueError(f"{label} is on NUMA node {device.numa}, which has no entry in 'cpus'")
        gpu_ids = {g.index for g in self.gpus}
        nic_ids = {n.name for n in self.nics}
        seen_gpu: set[int] = set()
        seen_nic: set[str] = set()
        for switch in self.pcie_switches:
            for gpu in switch.gpus:
                if gpu not in gpu_ids:
                    raise ValueError(f"PCIe switch {switch.name} lists GPU {gpu}, which the profile does not have")
                if gpu in seen_gpu:
                    raise ValueError(f"GPU {gpu} is under more than one PCIe switch")
                seen_gpu.add(gpu)
            for nic in switch.nics:
                if nic not in nic_ids:
                    raise ValueError(f"PCIe switch {switch.name} lists NIC {nic}, which the profile does not have")
                if nic in seen_nic:
                    raise ValueError(f"NIC {nic} is under more than one PCIe switch")
                seen_nic.add(nic)
        return self

    def backend_nics(self) -> list[Nic]:
        """NICs on the RoCE fabric, in rail order."""
        return sorted((n for n in self.nics if n.rail is not None), key=lambda n: (n.rail, n.name))


HOST_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,40}$|^([A-Za-z0-9][A-Za-z0-9._-]{0,39})?\{index(:0?[0-9]{1,2}d)?\}[A-Za-z0-9._-]{0,20}$"
"""A host name, or a pattern whose expansion is one: it starts with a letter or digit, like every Name."""


class HostOverride(SpecModel):
    """Per-host exceptions to its profile."""

    nics_out_of_service: list[RdmaDevice] = []
    """NICs taken out of service (failed optic, RMA): dropped from NCCL_IB_HCA and the NIC script."""
    nccl_env: NcclEnv = {}
    description: Description = ""


class HostGroup(SpecModel):
    """Either ``count`` hosts named by ``name`` (``gt{index:05d}``), or an explicit ``names`` list."""

    profile: Name
    count: Annotated[int, Field(ge=1, le=200_000)] | None = None
    name: Annotated[str, StringConstraints(pattern=HOST_PATTERN)] | None = None
    start: Annotated[int, Field(ge=0, le=10_000_000)] = 1
    names: list[Name] | None = None
    overrides: dict[Name, HostOverride] = {}

    @field_validator("name")
    @classmethod
    def _only_index_field(cls, value: str | None) -> str | None:
        if value is not None and pattern_fields(value) - {"index"}:
            raise ValueError("a host name pattern may only use the {index} field")
        return value

    @model_validator(mode="after")
    def _count_or_names(self) -> Self:
        if self.names is not None:
            if self.count is not None or self.name is not None:
                raise ValueError("give either 'names' or 'count' with 'name', not both")
            _unique(self.names, "host name")
        else:
            if self.count is None or self.name is None:
                raise ValueError("a host group needs 'count' and 'name' (a pattern like 'gt{index:05d}'), or 'names'")
            if self.count > 1 and "{index" not in self.name:
                raise ValueError("'name' must contain {index} when count > 1")
        return self

    def host_count(self) -> int:
        """How many hosts the group makes, without expanding their names."""
        return self.count if self.count is not None else len(self.names or [])

    def host_names(self) -> list[str]:
        if self.names is not None:
            return list(self.names)
        assert self.count is not None and self.name is not None
        if "{index" not in self.name:
            return [self.name]
        match = re.search(r"\{index(?::0?([0-9]{1,2})d)?\}", self.name)
        assert match is not None
        width = int(match.group(1) or 0)
        head, tail = self.name[: match.start()], self.name[match.end():]
        return [f"{head}{str(i).zfill(width)}{tail}" for i in range(self.start, self.start + self.count)]


def _unique(values: Sequence[Hashable], what: str) -> None:
    seen: set[Hashable] = set()
    for value in values:
        if value in seen:
            raise ValueError(f"{what} {value} appears more than once")
        seen.add(value)
