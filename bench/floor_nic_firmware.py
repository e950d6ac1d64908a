"""The floor of ``nic-firmware``: each profile's ``nic-firmware.sh`` from its template's literal text, no Jinja."""

from __future__ import annotations

import shlex

from bench.floor_nic_qos_script import template_parts
from fabgen.plan import FabricPlan
from fabgen.plan.nic_intent import FirmwareIntent


def _devices(intent: FirmwareIntent) -> str:
    out = []
    for device in intent.devices:
        settings, optional = intent.device_settings(device), intent.optional_device_settings(device)
        out.append(f"    configure_device {shlex.quote(device.pci)} "
                   f"{shlex.quote(','.join(device.nics) if device.nics else device.pci)} \\")
        words = [shlex.quote(f"{n}={v}") for n, v in settings] + [shlex.quote(f"?{n}={v}") for n, v in optional]
        out += [f"        {w} \\" for w in words[:-1]] + [f"        {w}" for w in words[-1:]]
    return "".join(line + "\n" for line in out)


def floor_files(plan: FabricPlan) -> dict[str, str]:
    """``{hosts/_profiles/PROFILE/nic-firmware.sh: text}`` for every profile with a firmware intent, like the target."""
    before, after, raw = template_parts("mlx5/nic-firmware.sh.j2", "{% for device, settings, optional in devices %}")
    return {f"hosts/_profiles/{name}/nic-firmware.sh":
            before.replace("{{ intent.profile | shell_quote }}", shlex.quote(intent.profile)) + _devices(intent)
            + after + raw for name, intent in plan.firmware.items()}
