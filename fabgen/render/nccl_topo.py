"""``nccl-topo``: one NCCL topology file per host profile.

The tree comes from :func:`fabgen.plan.topology.topology_intent`; the template
only prints it. Every file is run through NCCL's own lexical and structural
rules (:func:`~fabgen.render.nccl_topo_check.check_topology_xml`) before it is
written, because NCCL aborts on a malformed file and silently ignores a wrong one.
"""

from __future__ import annotations

from fabgen.errors import Problem
from fabgen.plan.topology import topology_intent
from fabgen.render.nccl_topo_check import check_topology_xml
from fabgen.render.registry import RenderContext, Target

TEMPLATE = "nccl/nccl-topo.xml.j2"


def topology_path(profile: str) -> str:
    """Where a profile's file lands in the output tree."""
    return f"hosts/_profiles/{profile}/nccl-topo.xml"


def render_topology(context: RenderContext, profile: str) -> str:
    """The text of ``nccl-topo.xml`` for one host profile."""
    intent = topology_intent(context.plan.spec, profile)
    return context.env.get_template(TEMPLATE).render(topo=intent)


def _render(context: RenderContext, profile: str) -> dict[str, str]:
    return {topology_path(profile): render_topology(context, profile)}


def _validate(path: str, text: str) -> list[Problem]:
    return check_topology_xml(text, path)


TARGET = Target(
    name="nccl-topo",
    scope="profile",
    summary="NCCL topology XML (NCCL_TOPO_FILE) per host profile",
    render=_render,
    validate=_validate,
)
