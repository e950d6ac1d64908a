"""Render the mlx5 NIC scripts: ``roce-nic.sh`` per host, ``nic-firmware.sh`` per profile.

The templates print a :class:`~fabgen.plan.nic_intent.HostNicIntent` or
:class:`~fabgen.plan.nic_intent.FirmwareIntent`; every value lands in a root
shell script, so each one goes through :func:`shell_quote` even though the
intent already refuses unsafe names (defence in depth: a template edit that
forgets validation must still not open an injection).
"""

from __future__ import annotations

from dataclasses import replace

import jinja2

from fabgen.errors import OutputError, Problem
from fabgen.plan.model import Host
from fabgen.plan.nic_intent import FirmwareIntent, HostNicIntent
from fabgen.targets.base import RenderContext, Target
from fabgen.targets.environment import environment, shell_quote

__all__ = ["FIRMWARE_TARGET", "TARGET", "render_firmware_script", "render_nic_script", "shell_quote"]

NIC_SCRIPT_TEMPLATE = "mlx5/roce-nic.sh.j2"
FIRMWARE_SCRIPT_TEMPLATE = "mlx5/nic-firmware.sh.j2"


def render_nic_script(intent: HostNicIntent, env: jinja2.Environment | None = None) -> str:
    """``hosts/NAME/roce-nic.sh``: the idempotent runtime QoS/DCQCN script of one host."""
    return (env or environment()).get_template(NIC_SCRIPT_TEMPLATE).render(intent=intent)


def render_firmware_script(intent: FirmwareIntent, env: jinja2.Environment | None = None) -> str:
    """``hosts/_profiles/PROFILE/nic-firmware.sh``: persistent mlxconfig settings of a profile."""
    devices = [(device, intent.device_settings(device)) for device in intent.devices]
    return (env or environment()).get_template(FIRMWARE_SCRIPT_TEMPLATE).render(intent=intent, devices=devices)


_HOST_SENTINEL = "fabgen-host"
_HOST_LINE = "readonly HOST="


def _render_host(context: RenderContext, host: Host) -> dict[str, str]:
    """Hosts of one profile share every line but ``readonly HOST=``: render once per distinct intent."""
    intent = host.nic_intent
    if intent is None:
        return {}
    cache: dict[HostNicIntent, str] = context.cache.setdefault("nic-qos", {})
    key = replace(intent, host=_HOST_SENTINEL)
    text = cache.get(key)
    if text is None:
        text = cache[key] = render_nic_script(key, context.env)
        if text.count(f"\n{_HOST_LINE}{_HOST_SENTINEL}\n") != 1:  # a user's overlay may not
            where = context.env.get_template(NIC_SCRIPT_TEMPLATE).filename or NIC_SCRIPT_TEMPLATE
            raise OutputError([Problem("the roce-nic.sh template must print 'readonly HOST={{ intent.host "
                                       "| shell_quote }}' on exactly one line", file=where)])
    text = text.replace(f"\n{_HOST_LINE}{_HOST_SENTINEL}\n", f"\n{_HOST_LINE}{shell_quote(host.name)}\n", 1)
    return {f"hosts/{host.name}/roce-nic.sh": text}


def _render_profile(context: RenderContext, profile: str) -> dict[str, str]:
    intent = context.plan.firmware.get(profile)
    if intent is None:
        return {}
    return {f"hosts/_profiles/{profile}/nic-firmware.sh": render_firmware_script(intent, context.env)}


TARGET = Target(name="nic-qos", scope="host", summary="per-host mlx5 trust/PFC/ETS/ECN/DCQCN script (roce-nic.sh)",
                render=_render_host)
FIRMWARE_TARGET = Target(name="nic-firmware", scope="profile",
                         summary="per-profile persistent mlxconfig settings (nic-firmware.sh)", render=_render_profile)
