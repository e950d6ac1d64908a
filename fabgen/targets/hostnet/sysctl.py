"""``host-sysctl``: a profile's backend sysctl.d file (``hosts/_profiles/PROFILE/sysctl.conf``).

Per profile, not per host: the file sets three keys per backend netdev and
names nothing else, so at 24k hosts one copy per host was 3,072 identical
files but for their header (6.5 MB). A host whose configured backend NICs are
not all of its profile's (``nics_out_of_service``, an uncabled NIC) keeps a
file of its own from ``host-net`` (:func:`fabgen.targets.hostnet.config.own_sysctl`),
so no host sets keys for a NIC its network files leave alone; the install map
(:mod:`fabgen.targets.install`) names whichever copy a host installs.
"""

from __future__ import annotations

from fabgen.targets.base import RenderContext, Target
from fabgen.targets.hostnet.config import (
    check_host_network_file,
    host_interfaces,
    profile_interfaces,
    profile_sysctl_path,
    render_sysctl,
)


def _render(context: RenderContext, profile: str) -> dict[str, str]:
    """Rendered only when some host installs it: a copy no host lists would be an orphan in the tree."""
    spec = context.plan.spec
    used: set[str] | None = context.cache.get("host-sysctl-used")
    if used is None:
        ifaces = {name: profile_interfaces(spec, name) for name in spec.host_profiles}
        used = context.cache["host-sysctl-used"] = {
            h.profile for h in context.plan.hosts if ifaces[h.profile] and host_interfaces(h) == ifaces[h.profile]}
    interfaces = profile_interfaces(spec, profile)
    if profile not in used:
        return {}
    return {profile_sysctl_path(profile): render_sysctl(context.env, spec.cluster.name, f"profile {profile}",
                                                        interfaces, profile=profile)}


TARGET = Target(
    name="host-sysctl",
    scope="profile",
    summary="per-profile sysctl.d for the backend NICs (arp_ignore, arp_announce, rp_filter); a host whose NICs "
            "differ from its profile's gets its own from host-net",
    render=_render,
    check=check_host_network_file,
)
