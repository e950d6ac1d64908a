"""What the Ansible plugins do, as plain Python: load once, pick a device's files, write if changed.

Kept apart from the plugin files so it is tested without Ansible and so the
plugins stay shells that only translate arguments and errors.

Why a cache: a play over a fabric calls the filters and the action once per
device, and planning a 24k-GPU spec takes seconds. The loaded spec and its
plan are kept per (real path, mtime, size) for the life of the process, so a
changed spec is replanned and an unchanged one is not. Ansible forks a worker
per host and task, so the cache pays off inside one worker (a loop, a
``run_once`` task with ``device: "*"``, several filter calls in one template)
and in the controller process; it never serves a stale plan.
"""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from fabgen.errors import FabgenError, Problem

if TYPE_CHECKING:
    from fabgen.plan import FabricPlan
    from fabgen.spec import ClusterSpec

__all__ = [
    "FabgenError",
    "Outcome",
    "cache_clear",
    "cache_stats",
    "host_files",
    "lint_findings",
    "loaded",
    "normalise",
    "render_to",
    "switch_config",
]

_CACHE_SIZE = 4
_cache: OrderedDict[tuple[str, int, int], tuple[ClusterSpec, FabricPlan]] = OrderedDict()
_lock = threading.Lock()
_stats = {"hits": 0, "misses": 0}


def normalise(value: Any) -> Any:
    """Plain ``dict``/``list``/``str``/numbers, whatever Ansible handed us.

    ansible-core 2.19 passes lazy containers and tagged strings (subclasses that
    carry provenance); pydantic and ruamel refuse or mishandle them. A JSON round
    trip strips the tags and resolves the laziness once, here at the boundary.
    """
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError) as exc:
        raise FabgenError([Problem(f"argument is not plain data (strings, numbers, lists, dicts): {exc}",
                                   file="ansible")]) from None


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise FabgenError([Problem(f"{what} must be a non-empty string, got {value!r}", file="ansible")])
    return value


def loaded(spec_path: str | os.PathLike[str]) -> tuple[ClusterSpec, FabricPlan]:
    """The validated spec and its plan, from the cache while the file is unchanged."""
    from fabgen.pipeline import load_spec, plan_fabric

    path = Path(spec_path)
    try:
        st = path.stat()
    except FileNotFoundError:
        raise FabgenError([Problem("no such file", file=str(path))]) from None
    except OSError as exc:
        raise FabgenError([Problem(f"cannot read: {exc.strerror}", file=str(path))]) from None
    key = (os.path.realpath(path), st.st_mtime_ns, st.st_size)
    with _lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            _stats["hits"] += 1
            return hit
    spec = load_spec(path)
    result = (spec, plan_fabric(spec))
    with _lock:
        _stats["misses"] += 1
        _cache[key] = result
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return result


def cache_clear() -> None:
    with _lock:
        _cache.clear()
        _stats.update(hits=0, misses=0)


def cache_stats() -> dict[str, int]:
    with _lock:
        return dict(_stats, entries=len(_cache))


def _targets(value: Any) -> list[str] | None:
    if value is None or value == []:
        return None
    if isinstance(value, str):
        return [t.strip() for t in value.split(",") if t.strip()]
    if isinstance(value, list) and all(isinstance(t, str) for t in value):
        return list(value)
    raise FabgenError([Problem(f"targets must be a list of target names, got {value!r}", file="ansible")])


def host_files(spec_path: Any, hostname: Any, targets: Any = None) -> dict[str, str]:
    """``{relpath: text}`` of one host: its own files and its profile's (NCCL topology)."""
    from fabgen.inventory import device_files

    spec_path, hostname, targets = normalise([spec_path, hostname, targets])
    _, fabric = loaded(_text(spec_path, "spec path"))
    return device_files(fabric, [_text(hostname, "host name")], _targets(targets), kind="host")


def switch_config(spec_path: Any, hostname: Any, targets: Any = None) -> dict[str, str]:
    """``{relpath: text}`` of one switch (its configuration, one file per OS target)."""
    from fabgen.inventory import device_files

    spec_path, hostname, targets = normalise([spec_path, hostname, targets])
    _, fabric = loaded(_text(spec_path, "spec path"))
    return device_files(fabric, [_text(hostname, "switch name")], _targets(targets), kind="switch")


def lint_findings(spec_path: Any) -> list[dict[str, Any]]:
    """The linter's findings as plain dicts (what Ansible can loop over, ``selectattr`` and print)."""
    spec_path = _text(normalise(spec_path), "spec path")
    spec, fabric = loaded(spec_path)
    from fabgen.pipeline import lint_fabric

    return [_finding_dict(f) for f in lint_fabric(spec, fabric)]


def _finding_dict(finding: Any) -> dict[str, Any]:
    """Whatever shape a Finding has (dataclass, pydantic model, plain object), as JSON-safe data."""
    if dataclasses.is_dataclass(finding) and not isinstance(finding, type):
        data: Any = dataclasses.asdict(finding)
    elif hasattr(finding, "model_dump"):
        data = finding.model_dump(mode="json")
    elif hasattr(finding, "to_dict"):
        data = finding.to_dict()
    elif isinstance(finding, dict):
        data = dict(finding)
    else:
        data = {k: v for k, v in vars(finding).items() if not k.startswith("_")}
    if not isinstance(data, dict):
        data = {"value": data}
    if "text" not in data and type(finding).__str__ is not object.__str__:
        data["text"] = str(finding)
    return json.loads(json.dumps(data, default=str, sort_keys=True))


@dataclass
class Outcome:
    """What :func:`render_to` did (or, in check mode, would do)."""

    files: list[str] = field(default_factory=list)
    """Every file of the device, relative to dest."""
    changes: list[tuple[str, str | None, str]] = field(default_factory=list)
    """(relpath, content before or None when absent, content after) of files that differ."""

    @property
    def changed(self) -> bool:
        return bool(self.changes)


def render_to(
    spec_path: str,
    devices: Sequence[str],
    dest: str | os.PathLike[str],
    targets: Iterable[str] | str | None = None,
    *,
    templates: str | None = None,
    check: bool = False,
) -> Outcome:
    """Write the devices' files under ``dest`` (same layout as ``fabgen generate``), only where changed.

    A file is replaced atomically (temporary file + rename), so two hosts of one
    profile writing the shared topology file at once leave a whole file. Nothing
    is ever written through a symlink inside ``dest``.
    """
    from fabgen.inventory import device_files
    from fabgen.writer import safe_relpath

    _, fabric = loaded(spec_path)
    files = device_files(fabric, list(devices), _targets(targets), Path(templates) if templates else None)
    root = Path(dest)
    outcome = Outcome()
    for rel, text in sorted(files.items()):
        rel = safe_relpath(rel)
        outcome.files.append(rel)
        after = text.encode("utf-8")
        before = _current(root, rel)
        if before == after:
            continue
        outcome.changes.append((rel, None if before is None else before.decode("utf-8", errors="replace"), text))
        if not check:
            _replace(root / rel, after)
    return outcome


def _current(root: Path, rel: str) -> bytes | None:
    """Bytes of ``root/rel`` or None when absent; refuses a symlink on the way (it could point anywhere)."""
    current = root
    for part in PurePosixPath(rel).parts:
        current = current / part
        if current.is_symlink():
            raise FabgenError([Problem("is a symlink; refusing to write through it", file=str(current))])
    if current.is_dir():
        raise FabgenError([Problem("is a directory where a generated file belongs", file=str(current))])
    try:
        return current.read_bytes()
    except FileNotFoundError:
        return None


def _replace(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.fabgen-{secrets.token_hex(6)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies, as for any new file
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        try:
            os.chmod(tmp, path.stat().st_mode & 0o7777)  # keep the mode an operator gave the old file
        except FileNotFoundError:
            pass
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
