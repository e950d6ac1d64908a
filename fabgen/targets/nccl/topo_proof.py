"""Prove, without lxml, that a scanned topology file passes ``schemas/nccl-topo.xsd``; or say "cannot tell".

Why: parsing and compiling the schema costs about 1 ms per process and
validating the tree another half, three times what printing nccl-topo's one
file per profile costs, for a file the scanner has already read tag by tag.
The scanner's tree (:mod:`fabgen.targets.nccl.topo_check`) holds everything the
schema looks at: element nesting, attribute names, attribute values. These
rules accept a *subset* of what the schema accepts (integers without signs or
leading zeros beyond NCCL's own, values of printable ASCII only, empty elements
only as ``<x/>``, and so on): when they say valid, libxml2 says valid. Any doubt
answers None and the caller runs lxml as before, so a file with a problem
always gets lxml's own messages. Tests plant faults in generated files and show
the check with this proof reports exactly what the full lxml check reports,
and that the tables below are the schema's (element, attribute and type names).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

_INT = re.compile(r"-?[0-9]{1,10}")
_COUNT = re.compile(r"[0-9]{1,10}")
_INT_MIN, _INT_MAX = -(1 << 31), (1 << 31) - 1
_FLOAT = re.compile(r"-?[0-9]{1,15}(?:\.[0-9]{1,15})?")
_SAFE_TEXT = re.compile(r'[ !#-%(-;=?-~]*')
"""Printable ASCII without ``"``, ``&``, ``'``, ``<``, ``>``: no entity, no markup, no normalisation."""
_BUSID = r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f]"

_PATTERNS: dict[str, re.Pattern[str]] = {
    "BusId": re.compile(_BUSID),
    "NvlinkTarget": re.compile(f"{_BUSID}|fffffff:ffff:ff"),
    "PciClass": re.compile(r"0x[0-9a-fA-F]{6}"),
    "PciId": re.compile(r"0x[0-9a-fA-F]{4}"),
    "CpuMask": re.compile(r"[0-9a-fA-F]{1,8}(?:,[0-9a-fA-F]{8})*"),
    "Hex64": re.compile(r"(?:0x)?[0-9a-fA-F]{1,16}"),
}
_ENUMS: dict[str, frozenset[str]] = {
    "LinkSpeed": frozenset({"2.5 GT/s", "5 GT/s", "8 GT/s", "16 GT/s", "32 GT/s", "2.5 GT/s PCIe", "5.0 GT/s PCIe",
                            "8.0 GT/s PCIe", "16.0 GT/s PCIe", "32.0 GT/s PCIe", "64.0 GT/s PCIe"}),
    "CpuArch": frozenset({"x86_64", "arm64", "ppc64"}),
    "CpuVendor": frozenset({"GenuineIntel", "AuthenticAMD", "CentaurHauls", "  Shanghai  "}),
    "Flag": frozenset({"0", "1"}),
}


def value_proved(kind: str, value: str) -> bool:
    """``value`` is surely valid for the schema's type ``kind`` (False: not proved, lxml decides)."""
    if kind in _ENUMS:
        return value in _ENUMS[kind]
    if kind in _PATTERNS:
        return _PATTERNS[kind].fullmatch(value) is not None
    if kind in ("xs:int", "Count"):
        return ((_COUNT if kind == "Count" else _INT).fullmatch(value) is not None
                and _INT_MIN <= int(value) <= _INT_MAX)
    if kind == "xs:float":
        return _FLOAT.fullmatch(value) is not None
    if kind == "NetName":
        return 1 <= len(value) <= 253 and _SAFE_TEXT.fullmatch(value) is not None
    if kind == "xs:string":
        return _SAFE_TEXT.fullmatch(value) is not None
    return False


_FLAG = "Flag"
ELEMENTS: dict[str, tuple[frozenset[str], dict[str, str], frozenset[str]]] = {
    "system": (frozenset({"cpu"}), {"version": "xs:string", "name": "xs:string"}, frozenset({"version"})),
    "cpu": (frozenset({"pci", "nic"}),
            {"numaid": "xs:int", "affinity": "CpuMask", "arch": "CpuArch", "vendor": "CpuVendor",
             "familyid": "xs:int", "modelid": "xs:int", "host_hash": "Hex64", "keep": _FLAG},
            frozenset({"numaid"})),
    "pci": (frozenset({"pci", "gpu", "nic", "pcilink"}),
            {"busid": "BusId", "class": "PciClass", "vendor": "PciId", "device": "PciId",
             "subsystem_vendor": "PciId", "subsystem_device": "PciId", "link_speed": "LinkSpeed",
             "link_width": "Count", "keep": _FLAG},
            frozenset({"busid"})),
    "gpu": (frozenset({"nvlink", "c2c"}),
            {"dev": "xs:int", "sm": "Count", "rank": "xs:int", "gdr": _FLAG, "mlopart": "xs:int", "keep": _FLAG},
            frozenset()),
    "nvlink": (frozenset(), {"target": "NvlinkTarget", "count": "Count", "tclass": "PciClass"},
               frozenset({"target", "count", "tclass"})),
    "c2c": (frozenset(), {"count": "Count", "bw": "Count"}, frozenset({"count", "bw"})),
    "nic": (frozenset({"net"}), {"keep": _FLAG}, frozenset()),
    "net": (frozenset(),
            {"name": "NetName", "dev": "xs:int", "speed": "xs:int", "latency": "xs:float", "port": "xs:int",
             "guid": "Hex64", "maxconn": "xs:int", "gdr": _FLAG, "coll": _FLAG, "net": _FLAG, "gin": _FLAG,
             "rma": _FLAG, "rail": "xs:int", "plane": "xs:int", "keep": _FLAG},
            frozenset({"name"})),
    "pcilink": (frozenset(), {"target": "BusId"}, frozenset({"target"})),
}
"""Per element of the schema: the children its type allows (each a choice, any number, any order), its
attributes and their types, and the required ones. ``system`` is the only global element: the only root."""
FIXED = {("system", "version"): "1"}
"""Attributes with a ``fixed`` value."""

_COMMENT_TEXT = re.compile("[\t\n\r -\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]*")
"""XML's Char production: a comment of these characters, without ``--`` or a final ``-``, is well formed."""


class _AttrLike(Protocol):
    name: str
    value: str | None


class _TagLike(Protocol):
    name: str
    single: bool

    @property
    def attrs(self) -> Sequence[_AttrLike]: ...


class _NodeLike(Protocol):
    @property
    def tag(self) -> _TagLike: ...

    @property
    def children(self) -> Sequence[_NodeLike]: ...


def comment_proved(body: str) -> bool:
    """The text between ``<!--`` and ``-->`` makes a well-formed XML comment."""
    return "--" not in body and not body.endswith("-") and _COMMENT_TEXT.fullmatch(body) is not None


def schema_valid(roots: Sequence[_NodeLike], tag_count: int) -> bool:
    """True only if the tree, read by the scanner from plain tags, surely passes the schema.

    ``tag_count`` is every start tag the scanner met: equal to the nodes in the
    tree, no element was skipped (NCCL skips what it has no handler for; the
    schema would judge it, these rules do not try).
    """
    if len(roots) != 1 or roots[0].tag.name != "system":
        return False
    seen = 0
    stack: list[_NodeLike] = [roots[0]]
    while stack:
        node = stack.pop()
        seen += 1
        tag = node.tag
        rule = ELEMENTS.get(tag.name)
        if rule is None:
            return False
        children, attributes, required = rule
        if not children and not tag.single:
            return False  # empty content: '<x></x>' or whitespace inside is the schema's call
        names = set()
        for attr in tag.attrs:
            kind = attributes.get(attr.name)
            value = attr.value
            if kind is None or value is None or not value_proved(kind, value):
                return False
            fixed = FIXED.get((tag.name, attr.name))
            if fixed is not None and value != fixed:
                return False
            names.add(attr.name)
        if not required <= names:
            return False
        for child in node.children:
            if child.tag.name not in children:
                return False
            stack.append(child)
    return seen == tag_count
