# Copyright: fabgen contributors
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Action ``fabgen.fabgen.render``: write one device's fabgen files on the controller, only where changed.

The options are documented in ``plugins/modules/render.py`` (``ansible-doc
fabgen.fabgen.render``). The files land under ``dest`` in the layout ``fabgen
generate`` uses. ``changed`` is true only when some file's content changed;
check mode reports without writing; diff mode returns before/after per changed
file. fabgen is imported when the task runs, so a play without fabgen installed
fails only here. Errors in the spec fail the task with the spec's
``file:line:col``. A ``spec`` string without a newline is a path; relative
``spec``, ``dest`` and ``templates`` resolve against the playbook's directory.
"""

from __future__ import annotations

import sys
from typing import Any

from ansible.plugins.action import ActionBase


class ActionModule(ActionBase):  # type: ignore[misc]  # ansible-core ships no type information
    """Render and write a device's files (see the module docstring)."""

    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("spec", "device", "dest", "targets", "templates"))
    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        task_vars = task_vars or {}
        result: dict[str, Any] = super().run(tmp, task_vars)
        del tmp
        try:
            from fabgen.ansible import _core
        except ImportError as exc:
            return {**result, "failed": True,
                    "msg": f"fabgen.fabgen.render needs the fabgen package in the Python that runs Ansible "
                           f"({sys.executable}): {exc}"}
        dest = ""
        try:
            args = _core.normalise(dict(self._task.args))
            spec = args.get("spec")
            if isinstance(spec, str) and "\n" not in spec:
                spec = self._path(spec, "spec")
            elif not isinstance(spec, (str, dict)):
                return {**result, "failed": True,
                        "msg": "fabgen.fabgen.render: spec is required (a path, YAML text or the spec as a mapping)"}
            dest = self._path(args.get("dest"), "dest")
            templates = self._path(args["templates"], "templates") if args.get("templates") else None
            device = args.get("device") or _core.normalise(task_vars.get("inventory_hostname"))
            devices = device if isinstance(device, list) else [device]
            outcome = _core.render_to(spec, devices, dest, args.get("targets"), templates=templates,
                                      check=bool(self._task.check_mode))
        except _core.FabgenError as exc:
            return {**result, "failed": True, "msg": str(exc)}
        except OSError as exc:
            return {**result, "failed": True, "msg": f"{exc.filename or dest}: {exc.strerror or exc}"}
        result.update(
            changed=outcome.changed,
            dest=dest,
            device=device,
            files=outcome.files,
            changed_files=outcome.changed_files,
        )
        if self._task.diff and outcome.changed:
            result["diff"] = [
                {"before": before or "", "after": after,
                 "before_header": f"{dest}/{rel}" if before is not None else "(absent)",
                 "after_header": f"{dest}/{rel}"}
                for rel, before, after in outcome.changes
            ]
        return result

    def _path(self, value: Any, name: str) -> str:
        """A path argument, relative ones resolved against the playbook's directory (as ``template`` does)."""
        if not isinstance(value, str) or not value:
            from fabgen.errors import FabgenError, Problem

            raise FabgenError([Problem(f"fabgen.fabgen.render: {name} is required (a path)", file="ansible")])
        return str(self._loader.path_dwim(value))
