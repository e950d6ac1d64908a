"""What the Ansible plugins do, as plain Python: load once, pick a device's files, write if changed.

Kept apart from the plugin files so it is tested without Ansible and so the
plugins stay shells that only translate arguments and errors.

The spec comes as a path, as YAML text, or as data (a dict built from
inventory vars); data is dumped to YAML text and validated under the name
``<inventory>``, so its errors read ``<inventory>:line:col: ... (at key.path)``.

Why a cache: a play over a fabric calls the filters and the action once per
device, and planning a 24k-GPU spec takes seconds. The loaded spec and its
plan are kept per (real path, mtime, size), or per content for text and data,
for the life of the process, so a changed spec is replanned and an unchanged
one is not. Ansible forks a worker per host and task, so the cache pays off
inside one worker (a loop, a ``run_once`` task with ``device: "*"``, several
filter calls in one template) and in the controller process; it never serves
a stale plan.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import json
import os
import secrets
import stat
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
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
_cache: OrderedDict[tuple[object, ...], tuple[ClusterSpec, FabricPlan]] = OrderedDict()
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


DATA_SOURCE = "<inventory>"
"""The file name a spec given as data carries in its errors (there is no file to point at)."""


def spec_text(data: dict[str, Any]) -> str:
    """A spec given as data (a dict from inventory vars) as YAML text, keys in the order given.

    Block style, one key a line, so an error's ``<inventory>:line:col`` names a
    line of this text and the ``(at qos.classes...)`` path that follows it names
    the key in the operator's vars. Dumping (not formatting by hand) quotes every
    string, so a value cannot add keys.
    """
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt", pure=True)  # the round-trip dumper keeps a dict's order; the safe one sorts
    yaml.default_flow_style = False
    yaml.width = 4096
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()


def loaded(spec: Any) -> tuple[ClusterSpec, FabricPlan]:
    """The validated spec and its plan, from the cache while the input is unchanged.

    ``spec`` is a path (cached per real path, mtime and size), YAML text (a
    string with a newline) or the spec as data (a dict); text and data are
    cached by content, so every host of a play that passes the same dict plans it once.
    """
    spec = normalise(spec)
    if isinstance(spec, dict):
        text = spec_text(spec)
        return _cached(("data", hashlib.sha256(text.encode()).hexdigest()), lambda: _from_text(text, DATA_SOURCE))
    if isinstance(spec, str) and "\n" in spec:
        text = spec
        return _cached(("text", hashlib.sha256(text.encode()).hexdigest()), lambda: _from_text(text, "<string>"))
    if not isinstance(spec, str) or not spec:
        raise FabgenError([Problem(f"spec must be a path, YAML text or the spec as a mapping, got {spec!r}",
                                   file="ansible")])
    path = Path(spec)
    try:
        st = path.stat()
    except FileNotFoundError:
        raise FabgenError([Problem("no such file", file=str(path))]) from None
    except OSError as exc:
        raise FabgenError([Problem(f"cannot read: {exc.strerror}", file=str(path))]) from None
    if not stat.S_ISREG(st.st_mode):
        raise FabgenError([Problem("is not a file (give the spec's path, its YAML text or its data)",
                                   file=str(path))])
    key = ("path", os.path.realpath(path), st.st_mtime_ns, st.st_size)
    return _cached(key, lambda: _from_path(path))


def _from_path(path: Path) -> ClusterSpec:
    from fabgen.pipeline import load_spec

    return load_spec(path)


def _from_text(text: str, name: str) -> ClusterSpec:
    """Validate YAML text under a file name of our choosing (``load_spec`` names text ``<string>``)."""
    from fabgen.source import load_source
    from fabgen.spec import validate_spec

    return validate_spec(load_source(name, text=text))


def _cached(key: tuple[object, ...], load: Callable[[], ClusterSpec]) -> tuple[ClusterSpec, FabricPlan]:
    from fabgen.pipeline import plan_fabric

    with _lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            _stats["hits"] += 1
            return hit
    spec = load()
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


def host_files(spec: Any, hostname: Any, targets: Any = None) -> dict[str, str]:
    """``{relpath: text}`` of one host: its own files and its profile's (NCCL topology)."""
    from fabgen.inventory import device_files

    spec, hostname, targets = normalise([spec, hostname, targets])
    _, fabric = loaded(spec)
    return device_files(fabric, [_text(hostname, "host name")], _targets(targets), kind="host")


def switch_config(spec: Any, hostname: Any, targets: Any = None) -> dict[str, str]:
    """``{relpath: text}`` of one switch (its configuration, one file per OS target)."""
    from fabgen.inventory import device_files

    spec, hostname, targets = normalise([spec, hostname, targets])
    _, fabric = loaded(spec)
    return device_files(fabric, [_text(hostname, "switch name")], _targets(targets), kind="switch")


def lint_findings(spec_input: Any) -> list[dict[str, Any]]:
    """The linter's findings as plain dicts (what Ansible can loop over, ``selectattr`` and print)."""
    spec, fabric = loaded(spec_input)
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
    if "text" not in data and "__str__" in {k for cls in type(finding).__mro__[:-1] for k in vars(cls)}:
        data["text"] = str(finding)  # only a str() the class defines says something; object's is an address
    plain: dict[str, Any] = json.loads(json.dumps(data, default=str, sort_keys=True))
    return plain


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

    @property
    def changed_files(self) -> list[str]:
        """Relative paths of the files that differ, sorted (as :attr:`files` is)."""
        return [change[0] for change in self.changes]


def render_to(
    spec: Any,
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

    _, fabric = loaded(spec)
    names = [_text(device, "device") for device in devices]
    files = device_files(fabric, names, _targets(targets), Path(templates) if templates else None)
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
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp, path.stat().st_mode & 0o7777)  # keep the mode an operator gave the old file
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
