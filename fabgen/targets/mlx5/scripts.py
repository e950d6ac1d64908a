"""Render the mlx5 NIC files: the shared ``roce-nic.sh``, each host's plan file, and ``nic-firmware.sh``.

``roce-nic.sh`` used to be rendered per host with the host's values inlined:
about 650 fixed lines repeated on every host (75 of the 109 MB of the 24k
example). Now the script is the same bytes for every host, rendered once into
each profile's directory (so a host's directory plus its profile's directory
still hold everything the host needs, and ``--device`` keeps working), and a
host gets only ``roce-nic.conf``: KEY=VALUE lines that the script parses as
data. The two carry :data:`PLAN_FORMAT`; the script refuses a plan of another
format, so a plan from a newer fabgen never meets an older script silently.

Every value lands in a file a root script reads, so the plan file is checked
line by line (:func:`plan_problems`) even though the intent already refuses
unsafe names: a template overlay that prints something else is caught here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import jinja2

from fabgen.errors import OutputError, Problem
from fabgen.plan.model import Host
from fabgen.plan.nic_intent import CC_PARAMS, MLX5_AUTO_BUFFER_CABLE_M, FirmwareIntent, HostNicIntent
from fabgen.targets.base import RenderContext, Target
from fabgen.targets.environment import environment, shell_quote, shipped_templates
from fabgen.targets.mlx5.plan_check import plan_problems as plan_problems
from fabgen.targets.mlx5.plan_check import shape_clean, vouch_named

__all__ = ["FIRMWARE_TARGET", "PLAN_FORMAT", "SHARED_TARGET", "TARGET", "nic_script_path", "plan_path",
           "plan_problems", "render_firmware_script", "render_nic_plan", "render_nic_script", "shell_quote"]

NIC_SCRIPT_TEMPLATE = "mlx5/roce-nic.sh.j2"
NIC_PLAN_TEMPLATE = "mlx5/roce-nic.conf.j2"
FIRMWARE_SCRIPT_TEMPLATE = "mlx5/nic-firmware.sh.j2"

PLAN_FORMAT = 1
"""Format of ``roce-nic.conf``. Bump it whenever a key is added, removed or changes meaning: the script
accepts exactly its own format, so old scripts refuse new plans instead of misreading them."""

MAX_MTU = 9978
"""Largest MTU mlx5 accepts on ConnectX-5 and later (``max_mtu`` of the netdev); the script refuses more."""

def nic_script_path(profile: str) -> str:
    return f"hosts/_profiles/{profile}/roce-nic.sh"


def plan_path(host: str) -> str:
    return f"hosts/{host}/roce-nic.conf"


def _version() -> str:
    from fabgen.pipeline import __version__  # pipeline imports the targets: import late

    return f"fabgen {__version__}"


def render_nic_script(env: jinja2.Environment | None = None) -> str:
    """The shared ``roce-nic.sh``: the machinery, the runtime DCQCN parameter names, no host's values."""
    cc = [(p.debugfs, p.ofed_side, p.ofed_file) for p in CC_PARAMS.values() if p.ofed is not None]
    text = (env or environment()).get_template(NIC_SCRIPT_TEMPLATE).render(
        version=_version(), plan_format=PLAN_FORMAT, cc_params=cc, cc_entries=cc_entries,
        default_cable_m=MLX5_AUTO_BUFFER_CABLE_M, max_mtu=MAX_MTU)
    if text.count(f"\nreadonly PLAN_FORMAT={PLAN_FORMAT}\n") != 1:  # a user's overlay may not
        where = (env or environment()).get_template(NIC_SCRIPT_TEMPLATE).filename or NIC_SCRIPT_TEMPLATE
        raise OutputError([Problem("the roce-nic.sh template must print 'readonly PLAN_FORMAT={{ plan_format "
                                   "| shell_quote }}' on exactly one line: the plan files it reads carry that "
                                   "format", file=where)])
    return text


def cc_entries(cc_params: Sequence[tuple[str, str, str]]) -> str:
    """The body of the script's ``CC_OFED`` array: ``    [debugfs]=side/file`` per parameter, both words
    shell-quoted (:func:`shell_quote`), one line each; built in one call, not by two filter calls per row."""
    return "".join(f"    [{shell_quote(debugfs)}]={shell_quote(f'{side}/{file}')}\n" for debugfs, side, file in cc_params)


def render_nic_plan(intent: HostNicIntent, mtus: Mapping[str, int] | None = None,
                    env: jinja2.Environment | None = None) -> str:
    """``hosts/NAME/roce-nic.conf``: one host's values; ``mtus`` by netdev (a NIC without one keeps its MTU)."""
    return (env or environment()).get_template(NIC_PLAN_TEMPLATE).render(
        intent=intent, mtus=dict(mtus or {}), plan_format=PLAN_FORMAT, version=_version())


def render_firmware_script(intent: FirmwareIntent, env: jinja2.Environment | None = None) -> str:
    """``hosts/_profiles/PROFILE/nic-firmware.sh``: persistent mlxconfig settings of a profile."""
    devices = [(device, intent.device_settings(device), intent.optional_device_settings(device))
               for device in intent.devices]
    return (env or environment()).get_template(FIRMWARE_SCRIPT_TEMPLATE).render(
        intent=intent, devices=devices, device_words=device_words)


def device_words(settings: Sequence[tuple[str, object]], optional: Sequence[tuple[str, object]]) -> str:
    """A device's ``NAME_Pn=value`` words, then ``?NAME_Pn=value`` for the optional ones: one shell-quoted word
    per line, indented, each but the last continued with `` \\``.

    Why here and not word by word in the template: that loop (a filter call and a conditional per word) was
    most of the file's render time. Quoted by :func:`shell_quote`, so no value can end a word or a line early;
    a value prints as the template's ``~`` printed it (its ``str``).
    """
    words = [shell_quote(f"{name}={value}") for name, value in settings]
    words += [shell_quote(f"?{name}={value}") for name, value in optional]
    return "".join(f"        {word} \\\n" for word in words[:-1]) + "".join(f"        {word}\n" for word in words[-1:])


def _render_host(context: RenderContext, host: Host) -> dict[str, str]:
    """Hosts of one profile differ only in their name: render the plan once per shape, then put each name in.

    The planner gives such hosts one intent apart from the name
    (:meth:`HostNicIntent.for_host` shares every other field), so the shape is
    the identity of those fields plus the MTUs; the cache holds the first
    intent, which keeps the identities from being reused. Putting the name in
    equals rendering only where the template prints the name as it is: so only
    the shipped template takes this path, and the first host of each shape is
    rendered in full and must equal the filled-in shape, or that shape renders
    in full for every host.
    """
    intent = host.nic_intent
    if intent is None:
        return {}
    interfaces = host.network.interfaces if host.network is not None else ()
    path = plan_path(host.name)
    if _SENTINEL in host.name or not shipped_templates(context, (NIC_PLAN_TEMPLATE,)):
        return {path: render_nic_plan(intent, {i.netdev: i.mtu for i in interfaces}, context.env)}
    shapes: dict[tuple[object, ...], tuple[HostNicIntent, list[str] | None, bool]] = context.cache.setdefault(
        "nic-qos-shapes", {})
    key = (*[id(getattr(intent, name)) for name in _SHAPE_FIELDS], *[(i.netdev, i.mtu) for i in interfaces])
    known = shapes.get(key)
    if known is None:
        mtus = {i.netdev: i.mtu for i in interfaces}
        text = render_nic_plan(intent, mtus, context.env)
        parts = render_nic_plan(intent.for_host(_SENTINEL), mtus, context.env).split(_SENTINEL)
        good = host.name.join(parts) == text
        shapes[key] = (intent, parts if good else None, good and shape_clean(path, parts, _SENTINEL))
        return {path: text}
    _, shape, clean = known
    if shape is None:
        return {path: render_nic_plan(intent, {i.netdev: i.mtu for i in interfaces}, context.env)}
    text = host.name.join(shape)
    vouch_named(path, text, host.name, clean)  # the check is then one identity test (plan_check.py says why)
    return {path: text}


_SENTINEL = "fabgen-sentinel-host"
"""A host name the intent accepts and the template's filters print as it is."""
_SHAPE_FIELDS = tuple(name for name in HostNicIntent.__slots__ if name != "host")


def _render_shared(context: RenderContext, profile: str) -> dict[str, str]:
    """The same script in every profile that has backend NICs, rendered once per run."""
    if not context.plan.spec.host_profiles[profile].backend_nics():
        return {}
    text = context.cache.get("nic-script")
    if text is None:
        text = context.cache["nic-script"] = render_nic_script(context.env)
    return {nic_script_path(profile): text}


def _render_profile(context: RenderContext, profile: str) -> dict[str, str]:
    intent = context.plan.firmware.get(profile)
    if intent is None:
        return {}
    return {f"hosts/_profiles/{profile}/nic-firmware.sh": render_firmware_script(intent, context.env)}


TARGET = Target(name="nic-qos", scope="host", summary="per-host plan of the mlx5 NICs' MTU, trust, PFC, ETS, ECN "
                "and DCQCN (roce-nic.conf), read by the shared roce-nic.sh", render=_render_host, check=plan_problems)
SHARED_TARGET = Target(name="nic-qos-script", scope="profile", summary="the shared, versioned roce-nic.sh that "
                       "applies a host's roce-nic.conf (idempotent, --check, --dry-run)", render=_render_shared)
FIRMWARE_TARGET = Target(name="nic-firmware", scope="profile",
                         summary="per-profile persistent mlxconfig settings (nic-firmware.sh)", render=_render_profile)
