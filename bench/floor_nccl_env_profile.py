"""The floor of ``nccl-env-profile``: each profile's shared NCCL pair that some host installs, by plain joins."""

from __future__ import annotations

from bench.floor_nccl_env import pair
from fabgen.plan import FabricPlan
from fabgen.targets.nccl.env import profile_conf_path, profile_env_path, shares_profile


def floor_files(plan: FabricPlan) -> dict[str, str]:
    """``{hosts/_profiles/P/nccl.conf: text, hosts/_profiles/P/nccl.env: text}`` per profile in use."""
    files: dict[str, str] = {}
    for profile in sorted({h.profile for h in plan.hosts if shares_profile(plan, h)}):
        files.update(pair(plan, f"profile {profile}", plan.nccl_env[profile], profile_conf_path(profile),
                          profile_env_path(profile)))
    return files
