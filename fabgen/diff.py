"""``fabgen diff``: which devices' outputs a spec change touches, before any pipeline runs.

A reviewer of a spec change wants the blast radius ("these 4 leaves and every
host of rail 2 change"), not a directory diff after the fact. Both specs are
planned and rendered in memory and their files compared; each file is
attributed to the device that owns it through the render registry's owner map
and the owning target's scope, so no target name is hard-coded here.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from fabgen.natural import natural_key

if TYPE_CHECKING:
    from fabgen.plan import FabricPlan
    from fabgen.spec import ClusterSpec

Status = Literal["changed", "added", "removed"]
Kind = Literal["switch", "host", "profile", "cluster"]
_KIND_ORDER: dict[str, int] = {"switch": 0, "host": 1, "profile": 2, "cluster": 3}


@dataclass(frozen=True)
class FileChange:
    path: str
    status: Status
    added: int
    """Lines only in the new output."""
    removed: int
    """Lines only in the old output."""
    patch: str = field(repr=False, default="")
    """Unified diff (3 lines of context), ``a/`` old and ``b/`` new."""


@dataclass(frozen=True)
class DeviceChange:
    device: str
    """Device name; ``""`` for cluster-wide files."""
    kind: Kind
    files: tuple[FileChange, ...]

    @property
    def added(self) -> int:
        return sum(f.added for f in self.files)

    @property
    def removed(self) -> int:
        return sum(f.removed for f in self.files)

    @property
    def label(self) -> str:
        return f"{self.kind} {self.device}" if self.device else "cluster"


@dataclass(frozen=True)
class SpecDiff:
    devices: tuple[DeviceChange, ...]

    def __bool__(self) -> bool:
        return bool(self.devices)

    @property
    def files(self) -> list[FileChange]:
        return [f for d in self.devices for f in d.files]

    def as_dict(self) -> dict[str, Any]:
        """JSON shape of ``fabgen diff --format json`` (stable keys, no patches)."""
        return {
            "changed": bool(self),
            "devices": [
                {"device": d.device or None, "kind": d.kind, "added": d.added, "removed": d.removed,
                 "files": [{"path": f.path, "status": f.status, "added": f.added, "removed": f.removed}
                           for f in d.files]}
                for d in self.devices
            ],
            "totals": {"devices": len(self.devices), "files": len(self.files),
                       "added": sum(d.added for d in self.devices), "removed": sum(d.removed for d in self.devices)},
        }


def _text_diff(path: str, before: str | None, after: str | None) -> FileChange:
    old = before.splitlines(keepends=True) if before is not None else []
    new = after.splitlines(keepends=True) if after is not None else []
    lines = list(difflib.unified_diff(old, new, f"a/{path}" if before is not None else "/dev/null",
                                      f"b/{path}" if after is not None else "/dev/null"))
    added = sum(1 for line in lines[2:] if line.startswith("+"))
    removed = sum(1 for line in lines[2:] if line.startswith("-"))
    status: Status = "added" if before is None else "removed" if after is None else "changed"
    patch = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
    return FileChange(path, status, added, removed, patch)


def diff_specs(
    old: ClusterSpec,
    new: ClusterSpec,
    targets: Iterable[str] | None = None,
    devices: Sequence[str] | None = None,
    templates: Path | None = None,
) -> SpecDiff:
    """Render both specs (the chosen targets and devices) and group the differing files by device."""
    from fabgen.pipeline import plan_fabric
    from fabgen.targets.registry import targets as all_targets
    from fabgen.targets.render import render_files

    chosen = list(targets) if targets else None
    old_plan, new_plan = plan_fabric(old), plan_fabric(new)
    if devices:
        _require_matches(devices, old_plan, new_plan)
    old_files, old_owners = render_files(old_plan, chosen, devices, templates)
    new_files, new_owners = render_files(new_plan, chosen, devices, templates)
    scope = {t.name: t.scope for t in all_targets()}

    grouped: dict[tuple[str, str], list[FileChange]] = {}
    for path in sorted(old_files.keys() | new_files.keys()):
        before, after = old_files.get(path), new_files.get(path)
        if before == after:
            continue
        target, device = new_owners.get(path) or old_owners[path]
        kind = scope.get(target, "cluster")
        grouped.setdefault((kind, device), []).append(_text_diff(path, before, after))
    ordered = sorted(grouped.items(), key=lambda item: (_KIND_ORDER.get(item[0][0], 9), natural_key(item[0][1])))
    return SpecDiff(tuple(DeviceChange(device, kind, tuple(files))  # type: ignore[arg-type]
                          for (kind, device), files in ordered))


def _require_matches(patterns: Sequence[str], *plans: FabricPlan) -> None:
    """A ``--device`` typo would report "nothing changes": refuse patterns that match no device of either spec."""
    import fnmatch

    from fabgen.errors import FabgenError, Problem

    names = {n for p in plans for n in (*(h.name for h in p.hosts), *(s.name for s in p.switches),
                                        *p.spec.host_profiles)}
    unmatched = [p for p in patterns if not fnmatch.filter(names, p)]
    if unmatched:
        raise FabgenError([Problem(f"--device {p!r} matches no device of either spec", file="fabgen")
                           for p in unmatched])


def format_text(result: SpecDiff, patch: bool = False) -> str:
    """One line per device (``+added -removed`` lines), its files indented; a total; patches on request."""
    if not result:
        return "no device's output changes\n"
    width = max(len(d.label) for d in result.devices)
    path_width = max(len(f.path) for f in result.files)
    out: list[str] = []
    for device in result.devices:
        count = len(device.files)
        out.append(f"{device.label:<{width}}  {count} file{'s' if count != 1 else ''}  +{device.added} -{device.removed}\n")
        for f in device.files:
            note = "" if f.status == "changed" else f"  ({f.status})"
            out.append(f"  {f.path:<{path_width}}  +{f.added} -{f.removed}{note}\n")
    totals = result.as_dict()["totals"]
    out.append(f"{totals['devices']} device(s), {totals['files']} file(s) changed, "
               f"+{totals['added']} -{totals['removed']} lines\n")
    if patch:
        out.append("\n")
        out.extend(f.patch for f in result.files)
    return "".join(out)
