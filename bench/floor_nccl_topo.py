"""The floor of ``nccl-topo``: each profile's topology XML by f-strings from the same intent, no template, no check."""

from __future__ import annotations

from fabgen.plan import FabricPlan
from fabgen.plan.topology import PciIntent, topology_intent
from fabgen.targets.nccl.topo import topology_path


def _e(value: object) -> str:
    """What the template's XML autoescape prints for a value."""
    return (str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&#34;")
            .replace("'", "&#39;"))


def _pci(p: PciIntent, indent: str, out: list[str]) -> None:
    ids = (f' vendor="{_e(p.ids[0])}" device="{_e(p.ids[1])}" subsystem_vendor="{_e(p.ids[2])}" '
           f'subsystem_device="{_e(p.ids[3])}"') if p.ids else ""
    head = (f'{indent}<pci busid="{_e(p.busid)}" class="{_e(p.pci_class)}"{ids} link_speed="{_e(p.link_speed)}" '
            f'link_width="{_e(p.link_width)}"')
    if not (p.children or p.gpu or p.net):
        out.append(head + "/>")
        return
    out.append(head + ">")
    if p.gpu:
        out.append(f'{indent}  <gpu dev="{_e(p.gpu.dev)}" sm="{_e(p.gpu.sm)}"/>')
    if p.net:
        n = p.net
        rail = f' rail="{_e(n.rail)}"' if n.rail is not None else ""
        out += [f"{indent}  <nic>", f'{indent}    <net name="{_e(n.name)}" port="{_e(n.port)}" speed="{_e(n.speed)}"'
                f"{rail}/>", f"{indent}  </nic>"]
    for child in p.children:
        _pci(child, indent + "  ", out)
    out.append(f"{indent}</pci>")


def _xml(plan: FabricPlan, profile: str) -> str:
    topo = topology_intent(plan.spec, profile)
    out = [f"<!-- {_e(topo.comment)} -->", '<system version="1">']
    for c in topo.cpus:
        attrs = [f'numaid="{_e(c.numaid)}"']
        attrs += [f'affinity="{_e(c.affinity)}"'] if c.affinity is not None else []
        attrs += [f'arch="{_e(c.arch)}"']
        attrs += [f'{k}="{_e(v)}"' for k, v in (("vendor", c.vendor), ("familyid", c.familyid),
                                                 ("modelid", c.modelid)) if v is not None]
        out.append(f"  <cpu {' '.join(attrs)}>")
        for pci in c.children:
            _pci(pci, "    ", out)
        out.append("  </cpu>")
    out.append("</system>")
    return "\n".join(out) + "\n"


def floor_files(plan: FabricPlan) -> dict[str, str]:
    """``{hosts/_profiles/PROFILE/nccl-topo.xml: text}`` for every host profile, like the target."""
    return {topology_path(profile): _xml(plan, profile) for profile in plan.spec.host_profiles}
