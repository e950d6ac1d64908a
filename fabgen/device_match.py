"""Which device names a ``--device`` glob list selects, without importing any target.

Kept apart from :mod:`fabgen.targets.registry` (which re-exports it) because the
one-device cache (:mod:`fabgen.plan_cache`) selects devices from a cached entry
and must not import the targets, the planner and pydantic to do it.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path


def device_matches(device: str, patterns: Sequence[str] | None) -> bool:
    """Cluster-wide files (device "") belong to a run only when no device filter is given."""
    if not patterns:
        return True
    return bool(device) and _globs(tuple(patterns)).match(device) is not None


@lru_cache(maxsize=64)
def _globs(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One compiled regex for a set of globs: matched against thousands of device names per run."""
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns))


def require_matches(known: set[str], patterns: Sequence[str], out_dir: Path) -> None:
    """A ``--device`` pattern that matches nothing is a typo: refuse it rather than check (or write) nothing.

    Devices named in the output's manifest count too, so the files of a device
    removed from the spec can still be checked or cleaned up by name. ``known``
    comes from :func:`fabgen.pipeline.device_names` (or a cached copy of it, :mod:`fabgen.plan_cache`).
    """
    from fnmatch import fnmatchcase

    from fabgen.errors import OutputError, Problem
    from fabgen.writer import read_manifest

    manifest = read_manifest(out_dir) if out_dir.is_dir() else None
    known = known | {str(e.get("device", "")) for e in (manifest or {}).get("files", {}).values()}
    unmatched = [p for p in patterns if not any(name and fnmatchcase(name, p) for name in known)]
    if unmatched:
        raise OutputError([Problem(f"--device {p!r} matches no device of the spec or of {out_dir}/manifest.json",
                                   file="fabgen") for p in unmatched])
