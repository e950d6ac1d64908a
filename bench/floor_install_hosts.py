"""The floor of ``install-hosts``: every host's install.json from the same entries
(:func:`fabgen.targets.install.host_entries`), joined as text without the check."""

from __future__ import annotations

from fabgen.plan import FabricPlan
from fabgen.targets.install import host_entries, host_install_path


def floor_files(plan: FabricPlan) -> dict[str, str]:
    files: dict[str, str] = {}
    for host in plan.hosts:
        lines = ",\n".join(f'    {{"source": "{e["source"]}", "dest": "{e["dest"]}", "mode": "{e["mode"]}", '
                           f'"then": "{e["then"]}"}}' for e in host_entries(plan, host))
        files[host_install_path(host.name)] = f'{{"device": "{host.name}", "kind": "host", "files": [\n{lines}\n]}}\n'
    return files
