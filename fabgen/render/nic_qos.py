"""Render the mlx5 NIC scripts: ``roce-nic.sh`` per host, ``nic-firmware.sh`` per profile.

The templates print a :class:`~fabgen.plan.nic_intent.HostNicIntent` or
:class:`~fabgen.plan.nic_intent.FirmwareIntent`; every value lands in a root
shell script, so each one goes through :func:`shell_quote` even though the
intent already refuses unsafe names (defence in depth: a template edit that
forgets validation must still not open an injection).
"""

from __future__ import annotations

import shlex

import jinja2
from jinja2.sandbox import SandboxedEnvironment

from fabgen._resources import resource_dir
from fabgen.plan.nic_intent import FirmwareIntent, HostNicIntent

NIC_SCRIPT_TEMPLATE = "mlx5/roce-nic.sh.j2"
FIRMWARE_SCRIPT_TEMPLATE = "mlx5/nic-firmware.sh.j2"


def shell_quote(value: object) -> str:
    """Quote one value as a single bash word (``shlex.quote``).

    Only strings and integers are accepted: ``None`` or a bool reaching a
    script means the template printed something the intent did not decide,
    which should fail the render rather than print ``'None'``.
    """
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise TypeError(f"shell_quote: refusing {type(value).__name__} value {value!r}")
    return shlex.quote(str(value))


def _environment(env: jinja2.Environment | None) -> jinja2.Environment:
    """The shared environment when given, else a local one with the project's settings."""
    if env is None:
        env = SandboxedEnvironment(
            loader=jinja2.FileSystemLoader(str(resource_dir("templates"))),
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
            trim_blocks=True,
            lstrip_blocks=True,
            autoescape=False,
        )
    if "shell_quote" not in env.filters:
        env.filters["shell_quote"] = shell_quote
    return env


def render_nic_script(intent: HostNicIntent, env: jinja2.Environment | None = None) -> str:
    """``hosts/NAME/roce-nic.sh``: the idempotent runtime QoS/DCQCN script of one host."""
    return _environment(env).get_template(NIC_SCRIPT_TEMPLATE).render(intent=intent)


def render_firmware_script(intent: FirmwareIntent, env: jinja2.Environment | None = None) -> str:
    """``hosts/_profiles/PROFILE/nic-firmware.sh``: persistent mlxconfig settings of a profile."""
    devices = [(device, intent.device_settings(device)) for device in intent.devices]
    return _environment(env).get_template(FIRMWARE_SCRIPT_TEMPLATE).render(intent=intent, devices=devices)
