"""FG509 deployed NCCL topology drift: a host's ``nccl-topo.xml`` as collected, against the plan's.

Compared by what NCCL reads from it (:mod:`fabgen.lint.deployed_profile`), so formatting, comments, attribute order
and what NCCL ignores are not drift. A deployed file may hold anything and findings go to CI logs: an element is
named by the plan's identity for it (a planned bus id, NUMA node or net), an attribute value is printed only when
the plan has that value too or it is a number of at most three digits, and elements the plan lacks are counted.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from fabgen.lint.context import LintContext, plural
from fabgen.lint.deployed import DeployedPair, pair_hits
from fabgen.lint.finding import Hit
from fabgen.natural import natural_key
from fabgen.targets.nccl.parse_topo import Topology, TopoNode
from fabgen.targets.nccl.topo_check import LINK_SPEEDS

_HINT = ("install the generated nccl-topo.xml again (where NCCL_TOPO_FILE points, /etc/fabgen/nccl-topo.xml by "
         "default), or put the change in the spec's host profile")
_SMALL = re.compile(r"-?[0-9]{1,3}")
_CLASSES = (("0x0604", "PCI switch"), ("0x03", "GPU"), ("0x02", "NIC"))
"""``class`` prefixes as NCCL matches them (``shared/reference/nccl.md`` §1.3), for naming a PCI device."""


def topo_drift(ctx: LintContext) -> Iterator[Hit]:
    """A host's deployed NCCL topology file differs from the plan.

    What it checks:
        With ``--deployed DIR``, each host's ``hosts/NAME/nccl-topo.xml`` (the
        copy ``NCCL_TOPO_FILE`` names on the host), or a profile's shared
        ``hosts/_profiles/P/nccl-topo.xml``, is read as NCCL reads it and
        compared with what fabgen renders for the host's profile: every CPU,
        PCI switch, GPU and NIC, the element each sits under, and the
        attributes NCCL uses (class, link speed and width, CPU affinity and
        model, GPU and net settings). Integers are compared as NCCL's
        ``strtol`` reads them, link speeds as the PCIe generation NCCL rates
        them at. A file NCCL refuses or misreads is reported with the line of
        its first problem (``fabgen check-topo FILE`` lists them all).

    Why it matters:
        NCCL takes the file's tree over what it detects. A NIC under another
        PCI switch than the plan's pairs a GPU with a NIC across the CPU
        interconnect; a link written as Gen3 or x8 is priced at a fraction of
        its bandwidth, and NCCL routes around it; a stale copy from another
        host type names bus ids this host does not have. The job starts and
        runs, at a fraction of its speed.

    Example:
        <!-- DIR/hosts/lab01/nccl-topo.xml, copied from another host type -->
        <pci busid="0000:17:00.0" class="0x020000" link_speed="16.0 GT/s PCIe" link_width="16"/>

    Fix:
        Install the generated ``nccl-topo.xml`` again, or, if the hardware
        changed, put the change in the spec's host profile and generate.
    """
    if ctx.deployed is None:
        return
    for deployed in ctx.deployed.topologies:
        yield from _file(deployed)


def _file(deployed: DeployedPair[Topology]) -> Iterator[Hit]:
    found, expected = deployed.found, deployed.expected
    said, first = ([], 0) if found is None or expected is None else _differences(found, expected)
    yield from pair_hits(deployed, "nccl-topo.xml", said, first, _HINT)


def _differences(found: Topology, expected: Topology) -> tuple[list[str], int]:
    """How each planned element differs as NCCL reads it, elements the plan lacks counted; the first one's line."""
    values = {value for node in expected.values() for _, value in node.written} | LINK_SPEEDS
    said: list[str] = []
    first = 0
    for key in sorted(expected, key=natural_key):
        want, have = expected[key], found.get(key)
        name = _name(key, want)
        if have is None:
            said.append(f"{name} missing")
            continue
        if have.element != want.element:
            said.append(f"{name} is another element")
        elif have.parent != want.parent:
            above = _name(have.parent, expected[have.parent]) if have.parent in expected else "another element"
            said.append(f"{name} under {above} (plan {_name(want.parent, expected[want.parent])})"
                        if want.parent in expected else f"{name} under {above}")
        else:
            changed = _attrs(have, want, values)
            if not changed:
                continue
            said.append(f"{name} " + ", ".join(changed))
        first = first or have.line
    extra = [key for key in found if key not in expected]
    if extra:
        said.append(f"{plural(len(extra), 'element')} the plan does not have")
        first = first or min(found[key].line for key in extra)
    return said, first


def _name(key: str, node: TopoNode) -> str:
    """How a finding names a planned element: a PCI device by what its class makes it and its bus id."""
    if node.element != "pci":
        return key
    kind = dict(node.attrs).get("class", "")
    return next((f"{label} {key}" for prefix, label in _CLASSES if kind.startswith(prefix)), f"PCI device {key}")


def _attrs(have: TopoNode, want: TopoNode, values: set[str]) -> list[str]:
    """``name value (plan value)`` for each attribute NCCL reads that differs, as the files spell them; a value
    neither planned, nor a link speed, nor a small number is "another value", and a planned attribute the file
    lacks is "unset" (NCCL detects it, or fails)."""
    found, planned = dict(have.attrs), dict(want.attrs)
    spelled, plan_spelled = dict(have.written), dict(want.written)
    out = []
    for name in sorted(found.keys() | planned.keys()):
        if found.get(name) == planned.get(name):
            continue
        value = spelled.get(name)
        shown = "unset" if value is None else value if value in values or _SMALL.fullmatch(value) else \
            "another value"
        out.append(f"{name} {shown} (plan {plan_spelled.get(name, 'unset')})")
    return out
