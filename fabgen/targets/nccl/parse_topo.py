"""Read an NCCL topology file back as NCCL builds its tree from it, for ``lint --deployed`` (FG509).

Why: the file ``NCCL_TOPO_FILE`` names takes precedence over what NCCL detects.
A copy left from another host type, or edited by hand, puts a NIC under another
PCI switch than its GPU's, or rates a Gen5 x16 link as Gen3 or x8: NCCL then
pairs GPUs with NICs across the CPU, or prices the link at a fraction, and the
job runs slowly on a fabric that is healthy.

The picture (:data:`Topology`) holds what NCCL reads from each element it keeps:
where the element sits (the identity of the element above it) and the attributes
NCCL uses, integers as ``strtol`` reads them (``0x10`` is 16), link speeds as
the PCIe generation NCCL's dictionary makes of them (``32 GT/s`` is
``32.0 GT/s PCIe``) and CPU masks as the set of CPUs they give. What NCCL
overwrites or ignores is left out: a GPU's ``rank``, a net's ``dev``,
``host_hash``, ``maxconn`` and attribute names NCCL does not read. So
formatting, comments, attribute order and an ignored attribute are no drift.
A file NCCL's parser refuses or misreads (the rules of
:func:`~fabgen.targets.nccl.topo_check.check_topology_xml` that are NCCL's, not
fabgen's stricter schema) has no picture: :class:`TopologyUnreadable`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fabgen.targets.nccl.topo_check import nccl_elements, strtol0

_READ: dict[str, frozenset[str]] = {
    "system": frozenset({"version"}),
    "cpu": frozenset({"numaid", "affinity", "arch", "vendor", "familyid", "modelid", "keep"}),
    "pci": frozenset({"busid", "class", "link_speed", "link_width", "vendor", "device", "subsystem_vendor",
                      "subsystem_device", "keep"}),
    "gpu": frozenset({"dev", "sm", "gdr", "mlopart", "keep"}),
    "nvlink": frozenset({"target", "count", "tclass"}),
    "c2c": frozenset({"count", "bw"}),
    "pcilink": frozenset({"busid", "class", "link_speed", "link_width"}),
    "nic": frozenset({"keep"}),
    "net": frozenset({"name", "speed", "latency", "port", "guid", "gdr", "coll", "net", "gin", "rma", "rail",
                      "plane", "keep"}),
}
"""The attributes NCCL reads of each element (``shared/reference/nccl.md`` §1.3), less those it always overwrites
(a GPU's ``rank``, a net's ``dev``, a CPU's ``host_hash``) or never uses (``maxconn``)."""
ATTRIBUTE_NAMES = frozenset().union(*_READ.values())
"""Every attribute name the picture may hold: a name a finding may print."""

_INTEGERS: dict[str, frozenset[str]] = {
    "system": frozenset({"version"}),
    "cpu": frozenset({"numaid", "familyid", "modelid", "keep"}),
    "pci": frozenset({"link_width", "keep"}),
    "gpu": frozenset({"dev", "sm", "gdr", "mlopart", "keep"}),
    "nvlink": frozenset({"count"}),
    "c2c": frozenset({"count", "bw"}),
    "nic": frozenset({"keep"}),
    "net": frozenset({"speed", "port", "gdr", "coll", "net", "gin", "rma", "rail", "plane", "keep"}),
}
"""Attributes NCCL reads with ``strtol(value, NULL, 0)``."""

_GENERATION = {"2.5 GT/s": "2.5 GT/s PCIe", "5 GT/s": "5.0 GT/s PCIe", "8 GT/s": "8.0 GT/s PCIe",
               "16 GT/s": "16.0 GT/s PCIe", "32 GT/s": "32.0 GT/s PCIe"}
"""The older kernels' spellings of ``link_speed`` and the one NCCL's dictionary rates the same (topo.cc)."""


@dataclass(frozen=True, slots=True)
class TopoNode:
    """One element NCCL keeps: what it is, the identity of the element it sits under, and what NCCL reads of it."""

    element: str
    parent: str
    """The identity (:data:`Topology` key) of the element above; ``""`` for ``<system>``."""
    attrs: tuple[tuple[str, str], ...]
    """(name, value as NCCL reads it) of each attribute NCCL uses, by name; the identity's own not repeated."""
    written: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    """The same attributes as the file spells them, for a finding."""
    line: int = field(default=0, compare=False)


Topology = dict[str, TopoNode]
"""Identity -> element: a CPU by ``NUMA node N``, a PCI device by its bus id, a net by ``net NAME``, anything else
by what it sits under (``GPU at BUSID``)."""


class TopologyUnreadable(ValueError):
    """NCCL refuses or misreads the file; ``line`` is where the first reason is."""

    def __init__(self, count: int, line: int) -> None:
        super().__init__(f"not read as written: NCCL refuses or misreads it ({count} problem"
                         f"{'s' if count != 1 else ''}, the first at line {line}; `fabgen check-topo` lists them)")
        self.line = line


def read_topology(text: str, file: str = "<topology>") -> Topology:
    """The picture of a topology file as NCCL reads it; :class:`TopologyUnreadable` when NCCL would not."""
    elements, problems = nccl_elements(text, file)
    if problems:
        raise TopologyUnreadable(len(problems), problems[0].line or 1)
    nodes: Topology = {}
    above: list[str] = []  # identity of the element at each depth on the way down
    counts: dict[tuple[str, str], int] = {}
    for depth, element, attrs, line in elements:
        del above[depth:]
        parent = above[-1] if above else ""
        key, own = _identity(element, attrs, parent, counts)
        written = tuple(sorted((name, value) for name, value in attrs.items()
                               if name in _READ.get(element, ()) and name != own))
        values = tuple((name, _value(element, name, value)) for name, value in written)
        nodes.setdefault(key, TopoNode(element, parent, values, written, line))  # NCCL finds the first bus id or name
        above.append(key)
    return nodes


def _identity(element: str, attrs: dict[str, str], parent: str, counts: dict[tuple[str, str], int]) -> tuple[str, str]:
    """(identity, the attribute it comes from, or ``""``) of an element under ``parent``."""
    if element == "system":
        return "system", ""
    if element == "cpu" and "numaid" in attrs:
        return f"NUMA node {strtol0(attrs['numaid'])}", "numaid"
    if element == "pci" and "busid" in attrs:
        return attrs["busid"], "busid"
    if element == "net" and "name" in attrs:
        return f"net {attrs['name']}", "name"
    index = counts[(parent, element)] = counts.get((parent, element), 0) + 1
    label = {"gpu": "GPU", "nic": "NIC"}.get(element, element)
    return f"{label} at {parent}" + (f" #{index}" if index > 1 else ""), ""


def _value(element: str, name: str, value: str) -> str:
    if name in _INTEGERS.get(element, ()):
        return str(strtol0(value))
    if name == "link_speed":
        return _GENERATION.get(value, value)
    if name == "affinity":
        return _cpus(value)
    if name == "guid":
        return _hex(value)
    return value


def _cpus(mask: str) -> str:
    """A cpumap (``0000ffff,ffffffff``, most significant word first) as its CPUs' bitmask in hex: leading zero words
    and their width do not matter. Anything else as written."""
    words = mask.split(",")
    if all(0 < len(w) <= 8 and all(c in "0123456789abcdefABCDEF" for c in w) for w in words) and len(words) <= 128:
        return f"{int(''.join(w.rjust(8, '0') for w in words), 16):x}"
    return mask


def _hex(value: str) -> str:
    """A ``guid`` as ``strtoull(value, NULL, 16)`` reads it, when it is only hex digits (with an optional ``0x``)."""
    body = value[2:] if value[:2].lower() == "0x" else value
    return f"0x{int(body, 16):x}" if 0 < len(body) <= 16 and all(c in "0123456789abcdefABCDEF" for c in body) \
        else value
