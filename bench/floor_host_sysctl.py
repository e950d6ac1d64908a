"""The floor of ``host-sysctl``: one sysctl.d file per profile some host shares, by f-strings."""

from __future__ import annotations

from bench.floor_host_net import sysctl_text
from fabgen.plan import FabricPlan
from fabgen.targets.hostnet.config import host_interfaces, profile_interfaces, profile_sysctl_path


def floor_files(plan: FabricPlan) -> dict[str, str]:
    spec = plan.spec
    ifaces = {name: profile_interfaces(spec, name) for name in spec.host_profiles}
    used = {h.profile for h in plan.hosts if ifaces[h.profile] and host_interfaces(h) == ifaces[h.profile]}
    return {profile_sysctl_path(p): sysctl_text(spec.cluster.name, f"profile {p}", ifaces[p])
            for p in spec.host_profiles if p in used}
