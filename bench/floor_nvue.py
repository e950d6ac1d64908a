"""The floor of ``nvue``: each Cumulus switch's three files from the same ``set`` tree, by joins, no check.

``startup.yaml`` and ``patch.yaml`` are the target's own joins
(:func:`~fabgen.targets.nvue.config.startup_yaml`, :func:`~fabgen.targets.nvue.patch.patch_yaml`): the target
writes them by hand already, so the floor can only share them. ``nvue.sh`` is the template's literal text
(cut at its tags) and the commands by f-strings.
What the target adds is the word check, the template and the output check (every file read back by a YAML
parser or the ``nv set`` grammar, against NVUE's schema).
"""

from __future__ import annotations

from fabgen._resources import resource_dir
from fabgen.plan import FabricPlan
from fabgen.targets.environment import shell_quote
from fabgen.targets.nvue.config import (
    SCRIPT_TEMPLATE,
    NvueConfig,
    _key,
    command_blocks,
    set_item,
    startup_yaml,
    unchecked_config,
)
from fabgen.targets.nvue.patch import owned_paths, patch_path, patch_yaml, unset_lines


def _template_parts() -> tuple[str, str, str]:
    """``(first line, usage, tail)``: the template's literal text around its header loop and its block loops."""
    source = (resource_dir("templates") / SCRIPT_TEMPLATE).read_text()
    source = source[source.index("-#}\n") + 4:]
    first, rest = source.split("{% for line in header %}\n", 1)
    usage, rest = rest.split("{% endfor %}\n", 1)[1].split("{% for block in blocks %}\n", 1)
    return first, usage, rest.split("{% endfor %}\n")[-1]


def _script(c: NvueConfig, first: str, usage: str, tail: str) -> str:
    out = [first + "".join(f"# {line}\n" for line in c.header) + usage.replace("{{ switch | shell_quote }}",
                                                                              shell_quote(c.switch))]
    for block in command_blocks(c):
        out.append("\n")
        out += [f"# {note}\n" for note in block.notes]
        out += [f"nv set {' '.join(map(shell_quote, words))}\n" for words in block.commands]
    return "".join(out) + tail


def floor_files(plan: FabricPlan) -> dict[str, str]:
    """``startup.yaml``, ``nvue.sh`` and ``patch.yaml`` of every Cumulus switch, like the ``nvue`` target."""
    files = {}
    parts = _template_parts()
    for s in plan.switches:
        if s.os == "cumulus":
            c = unchecked_config(s)
            files[f"switches/{s.name}/startup.yaml"] = startup_yaml(c)
            files[f"switches/{s.name}/nvue.sh"] = _script(c, *parts)
            files[patch_path(s.name)] = patch_yaml(c.header, unset_lines(owned_paths(c.tree), _key), set_item(c))
    return files
