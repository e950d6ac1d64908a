"""The floor of ``nic-qos-script``: the shared ``roce-nic.sh`` from its template's literal text, no Jinja.

The script is nearly all literal text (a ``{% raw %}`` block and a comment
header), so the floor cuts the template's source at its few tags and puts in the
same values the target passes; what the two take apart is Jinja's rendering.
"""

from __future__ import annotations

import shlex

from fabgen._resources import resource_dir
from fabgen.pipeline import __version__
from fabgen.plan import FabricPlan
from fabgen.plan.nic_intent import CC_PARAMS, MLX5_AUTO_BUFFER_CABLE_M
from fabgen.targets.mlx5.scripts import MAX_MTU, PLAN_FORMAT, nic_script_path


def template_parts(name: str, loop: str) -> tuple[str, str, str]:
    """``(before, after, raw)``: the template's text around its one ``loop`` block (or line) and its ``{% raw %}`` body.

    The leading ``{#- ... -#}`` comment and the loop's own lines print nothing
    (``trim_blocks``, ``lstrip_blocks``); the raw block prints as it is.
    """
    source = (resource_dir("templates") / name).read_text()
    source = source[source.index("-#}\n") + 4:]
    before, rest = source.split(f"{loop}\n", 1)
    rest = rest.split("{% endfor %}\n")[-1]
    after, raw = rest.split("{% raw %}", 1)
    return before, after, raw.removesuffix("{% endraw %}\n")


def floor_files(plan: FabricPlan) -> dict[str, str]:
    """``{hosts/_profiles/PROFILE/roce-nic.sh: text}`` for every profile with backend NICs, like the target."""
    before, after, raw = template_parts("mlx5/roce-nic.sh.j2", "{{ cc_entries(cc_params) -}}")
    version = f"fabgen {__version__}"
    for expression, value in (("version | comment_text", version), ("version | shell_quote", shlex.quote(version)),
                              ("plan_format | shell_quote", str(PLAN_FORMAT)), ("max_mtu | shell_quote", str(MAX_MTU)),
                              ("default_cable_m", str(MLX5_AUTO_BUFFER_CABLE_M))):
        before = before.replace("{{ " + expression + " }}", value)
    cc = "".join(f"    [{shlex.quote(p.debugfs)}]={shlex.quote(f'{p.ofed_side}/{p.ofed_file}')}\n"
                 for p in CC_PARAMS.values() if p.ofed is not None)
    text = before + cc + after + raw
    return {nic_script_path(p): text for p, profile in plan.spec.host_profiles.items() if profile.backend_nics()}
