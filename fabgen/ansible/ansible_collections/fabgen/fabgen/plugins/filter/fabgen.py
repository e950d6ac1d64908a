# Copyright: fabgen contributors
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""The collection's filters over fabgen's public API (docs: ``host_files.yml``, ``switch_config.yml``, ``lint.yml``).

    {{ spec | fabgen.fabgen.host_files(inventory_hostname) }}    -> {relpath: text}
    {{ spec | fabgen.fabgen.switch_config(inventory_hostname) }} -> {relpath: text}
    {{ spec | fabgen.fabgen.lint }}                              -> [finding dict, ...]

``spec`` is a path, YAML text, or the spec as data (a mapping). fabgen is
imported when a filter is called, not when Ansible loads this file, so a play
on a machine without fabgen fails only at the task that uses one. Every fabgen
error becomes an AnsibleFilterError whose message keeps the spec's
``file:line:col``. Relative spec paths are relative to the current directory;
prefer ``{{ playbook_dir }}/...``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from ansible.errors import AnsibleFilterError


def _core() -> Any:
    try:
        from fabgen.ansible import _core
    except ImportError as exc:
        raise AnsibleFilterError(
            f"the fabgen.fabgen filters need the fabgen package in the Python that runs Ansible ({sys.executable}): "
            f"{exc}"
        ) from None
    return _core


def _wrap(name: str, call: Callable[[Any], Callable[..., Any]]) -> Callable[..., Any]:
    def run(*args: Any) -> Any:
        core = _core()
        try:
            return call(core)(*args)
        except core.FabgenError as exc:
            raise AnsibleFilterError(f"fabgen.fabgen.{name}: {exc}") from None

    run.__name__ = name
    run.__doc__ = f"fabgen's {name} filter (see {name}.yml)."
    return run


class FilterModule:
    """fabgen filters: per-device files and lint findings from a cluster spec."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {
            "host_files": _wrap("host_files", lambda core: core.host_files),
            "switch_config": _wrap("switch_config", lambda core: core.switch_config),
            "lint": _wrap("lint", lambda core: core.lint_findings),
        }
