"""The floor of ``install-switches``: each EOS switch's install list as one f-string, no json module, no check.

The 24k fabric is all EOS; a switch of another OS is left to the target (the
bytes are asserted equal in ``bench/run.py``, so a floor that missed one would say so).
"""

from __future__ import annotations

from fabgen.plan import FabricPlan

_SESSION = ("a live switch: feed it to the CLI (configure session: fabgen's sections only), review the diff, "
            "commit timer, then commit")
_CFG = ("a new switch only: configure replace flash:startup-config (or reload) makes it the whole config, erasing "
        "users, AAA and all else fabgen does not write")


def floor_files(plan: FabricPlan) -> dict[str, str]:
    """``{switches/NAME.install.json: text}`` for every EOS switch, like the ``install-switches`` target."""
    return {f"switches/{n}.install.json":
            f'{{"device": "{n}", "kind": "switch", "files": [\n'
            f'    {{"source": "switches/{n}.session", "dest": "/mnt/flash/{n}.session", "mode": "0644", '
            f'"then": "{_SESSION}"}},\n'
            f'    {{"source": "switches/{n}.cfg", "dest": "/mnt/flash/startup-config", "mode": "0644", '
            f'"then": "{_CFG}"}}\n]}}\n'
            for n in (s.name for s in plan.switches if s.os == "eos")}
