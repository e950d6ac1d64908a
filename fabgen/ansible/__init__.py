"""Ansible integration: filter and action plugins shipped inside the package.

The plugins under ``plugins/`` are thin shells (as in Arista AVD): they import
fabgen lazily, normalise Ansible's inputs with a JSON round trip and turn every
fabgen error into an Ansible error carrying the spec's ``file:line:col``. The
work itself lives in :mod:`fabgen.ansible._core`, which is plain Python and is
tested without Ansible.

Point Ansible at the plugins with ``fabgen ansible-path``::

    export ANSIBLE_FILTER_PLUGINS=$(fabgen ansible-path --filter)
    export ANSIBLE_ACTION_PLUGINS=$(fabgen ansible-path --action)
    export ANSIBLE_LIBRARY=$(fabgen ansible-path --modules)

This module imports nothing heavy: the CLI calls it to print a path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

PluginKind = Literal["filter", "action", "modules"]

def plugin_dir(kind: PluginKind | None = None) -> Path:
    """The directory holding the plugins (``plugins/``), or one kind of them (``plugins/filter``)."""
    base = Path(__file__).resolve().parent / "plugins"
    return base / kind if kind else base
