"""On-disk cache for ``fabgen generate SPEC --device NAME``: the Ansible per-host path under 0.3 s.

What is cached, and why not the plan itself: the 24k example's :class:`FabricPlan`
pickles to 29 MB and takes 4 s to load (about a million small objects), longer
than planning it. What a one-device run needs from the plan is that device's
rendered files, so an entry holds every device's files of one (spec, targets,
templates) as it was planned and rendered, plus the few plan facts the write
needs (the device names a ``--device`` glob may match, the manifest metadata).
A miss plans and renders the whole fabric once (every output check runs), so
the next thousand per-host runs of a play read one device's record each. On a
hit the device's output checks run again on the cached text, so a file that
reaches the disk has passed them in this process.

Key and staleness. The entry's name is a SHA-256 over the spec's bytes and real
path, the ``--only`` targets, the user template overlay's file names and
contents, the shipped templates' and fabgen's own source files (name, size,
mtime: an edit in a checkout counts even without a version bump), fabgen's
version, Python's version and :data:`SCHEMA`. Every other file the load read
(an IPAM file; whatever a later include feature reads through
:func:`fabgen.bounded.read_bytes`) is recorded with its digest and re-hashed on
every hit; any difference is a miss.

Safety: no pickle, no code. An entry is JSON text and zlib-compressed JSON
records of strings, so a forged entry cannot run code while being read. It could
still carry a forged config, so the header (key, version, every record's
SHA-256) is authenticated with HMAC-SHA256 under a per-user 32-byte secret kept
in ``secret`` (mode 0600) in the cache directory (mode 0700); both must be owned
by the user, or the cache is not used. A bad MAC, a foreign key or version, a
truncated or unparsable file, a record whose digest differs: one note on stderr,
then the run plans from the spec as if there were no cache. HMAC rather than a
bare digest because a bare digest is recomputed by whoever edits the entry (for
example in a relocated, shared ``FABGEN_CACHE_DIR``); the secret never leaves
the user's 0700 directory.

Writes are atomic (a temporary file in the same directory, then
:func:`os.replace`), so concurrent writers leave one whole entry; an exclusive
:func:`fcntl.flock` on a per-key lock file makes the processes of one play that
miss together plan once: the others wait and then hit. At most
:data:`MAX_ENTRIES` entries and :data:`MAX_TOTAL_BYTES` bytes are kept, oldest
used first out.

Where: ``$FABGEN_CACHE_DIR``, else ``$XDG_CACHE_HOME/fabgen``, else
``~/.cache/fabgen``; ``FABGEN_CACHE_DIR=off`` or ``--no-cache`` disables it. The
directory, key and write rules are :mod:`fabgen.user_cache`'s, shared with the
compiled-template cache (:mod:`fabgen.targets.template_cache`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import sys
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fabgen import user_cache
from fabgen._version import __version__
from fabgen.errors import FabgenError, OutputError, Problem
from fabgen.user_cache import Note, private_dir, stderr_note
from fabgen.user_cache import user_secret as _secret

if TYPE_CHECKING:
    from fabgen.writer import Drift, WriteResult

SCHEMA = 1
"""Bump when the entry layout or what goes into the key changes."""
MAGIC = b"fabgen-device-cache\n"
MAX_ENTRIES = 8
"""Entries kept (one per spec, target set and template overlay in use)."""
MAX_TOTAL_BYTES = 1 << 30
"""Bytes kept across entries; the 24k example's entry (every default target) is about 44 MB."""
MAX_HEADER_BYTES = 64 << 20
MAX_SPEC_BYTES = 16 * 1024 * 1024
"""As :data:`fabgen.source.MAX_BYTES`; a larger spec is refused by the normal path, with its message."""


def _silent(message: str) -> None:
    """For the second look at an entry under the lock: what is wrong with it was said on the first."""


@dataclass(frozen=True)
class Request:
    """One ``fabgen generate --device`` run, as the command line gave it."""

    spec: Path
    out_dir: Path
    devices: tuple[str, ...]
    targets: tuple[str, ...] | None = None
    templates: Path | None = None
    check: bool = False
    force: bool = False
    jobs: int = 1


@dataclass(frozen=True)
class _Entry:
    header: dict[str, Any]
    path: Path
    blob_offset: int


def _tree_stats(root: Path, suffixes: tuple[str, ...] | None) -> Iterator[str]:
    """``relpath size mtime_ns`` of every file under root, sorted (cheap: stat only, no reads)."""
    rows: list[str] = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in names:
            if suffixes is not None and not name.endswith(suffixes):
                continue
            full = os.path.join(folder, name)
            info = os.stat(full)
            rows.append(f"{os.path.relpath(full, root)}\0{info.st_size}\0{info.st_mtime_ns}")
    return iter(sorted(rows))


def _tree_contents(root: Path) -> bytes:
    """Names and contents of every file under a user's template overlay (its edits may keep mtimes)."""
    from fabgen.bounded import MAX_TEMPLATE_BYTES, read_bytes

    digest = hashlib.sha256()
    for folder, dirs, names in sorted(os.walk(root)):
        dirs.sort()
        for name in sorted(names):
            full = os.path.join(folder, name)
            digest.update(os.path.relpath(full, root).encode("utf-8", "surrogateescape") + b"\0")
            digest.update(hashlib.sha256(read_bytes(full, MAX_TEMPLATE_BYTES, what="template")).digest())
    return digest.digest()


def code_fingerprint() -> str:
    """fabgen's own source and shipped templates/schemas, as stat rows: an edit in a checkout is a new key."""
    from fabgen._resources import resource_dir

    digest = hashlib.sha256()
    package = Path(__file__).resolve().parent
    for row in _tree_stats(package, (".py", ".j2", ".json", ".xsd", ".yang", ".yaml")):
        digest.update(row.encode("utf-8", "surrogateescape") + b"\n")
    for name in ("templates", "schemas"):
        folder = resource_dir(name)
        if package not in folder.parents:  # a checkout: beside the package, not inside it
            for row in _tree_stats(folder, None):
                digest.update(f"{name}/{row}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def entry_key(request: Request, spec_bytes: bytes) -> str:
    """The entry name for this request: everything its output depends on that a hit does not re-check."""
    digest = hashlib.sha256()
    for part in (f"schema {SCHEMA}", f"fabgen {__version__}", f"python {sys.version}",
                 f"spec {os.path.realpath(request.spec)}", f"targets {sorted(request.targets or ())}",
                 f"code {code_fingerprint()}"):
        digest.update(part.encode("utf-8", "surrogateescape") + b"\n")
    digest.update(hashlib.sha256(spec_bytes).digest())
    if request.templates is not None:
        digest.update(b"templates " + _tree_contents(request.templates))
    return digest.hexdigest()


def generate_device(request: Request, *, note: Note = stderr_note) -> WriteResult | Drift:
    """``fabgen generate --device`` through the cache: same files and result as :func:`fabgen.pipeline.generate`.

    Anything that makes the cache unusable (an untrusted directory, a bad entry)
    is a note and a normal run; input errors are raised as the normal run raises them.
    """
    from fabgen.bounded import read_bytes

    root = user_cache.active_cache_dir()
    if root is None:
        return _uncached(request)
    secret = _secret(root)
    if isinstance(secret, str):
        note(f"not used: {secret}")
        return _uncached(request)
    try:
        spec_bytes = read_bytes(request.spec, MAX_SPEC_BYTES, what="spec")
        key = entry_key(request, spec_bytes)
    except (FabgenError, OSError):
        return _uncached(request)  # the normal path says what is wrong with the input, at its line
    entries = root / f"entries-v{SCHEMA}"
    if private_dir(entries) is not None:
        return _uncached(request)
    path = entries / key
    entry = _open_entry(path, key, secret, note)
    served = _serve(entry, request, note) if entry is not None else None
    if served is not None:
        return served
    if entry is not None:  # a damaged record: drop the entry so this run refills it
        with suppress(OSError):
            path.unlink()
    with _locked(entries / f"{key}.lock"):
        entry = _open_entry(path, key, secret, _silent)  # another process may have filled it meanwhile
        served = _serve(entry, request, _silent) if entry is not None else None
        return served if served is not None else _fill_and_serve(request, spec_bytes, path, secret, note)


def _uncached(request: Request) -> WriteResult | Drift:
    from fabgen.pipeline import generate, load_spec

    return generate(load_spec(request.spec), request.out_dir, targets=request.targets, devices=request.devices,
                    templates=request.templates, check=request.check, force=request.force, jobs=request.jobs)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Exclusive per-key lock, so processes that miss together plan once (the others then hit)."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _open_entry(path: Path, key: str, secret: bytes, note: Note) -> _Entry | None:
    """The entry's verified header, or None (with a note if the file exists but cannot be trusted)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(len(MAGIC) + 8)
            if len(head) < len(MAGIC) + 8 or head[:len(MAGIC)] != MAGIC:
                raise ValueError("not a fabgen cache entry")
            size = int.from_bytes(head[len(MAGIC):], "big")
            if size > MAX_HEADER_BYTES:
                raise ValueError("header too large")
            text = handle.read(size)
            mac = handle.read(32)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        note(f"ignoring {path.name[:16]}: {exc}")
        return None
    if len(text) != size or len(mac) != 32:
        note(f"ignoring {path.name[:16]}: truncated")
        return None
    if not hmac.compare_digest(mac, hmac.new(secret, head + text, hashlib.sha256).digest()):
        note(f"ignoring {path.name[:16]}: authentication failed (tampered, or written under another secret)")
        return None
    try:
        header = json.loads(text)
        fresh = (header["schema"] == SCHEMA and header["key"] == key and header["fabgen"] == __version__
                 and all(_digest_of(file) == digest for file, digest in header["deps"]))
    except (ValueError, KeyError, TypeError) as exc:
        note(f"ignoring {path.name[:16]}: {exc}")
        return None
    if not fresh:
        return None  # an included file changed (or an entry under another name): a plain miss
    with suppress(OSError):
        os.utime(path)  # pruning drops the least recently used
    return _Entry(header, path, len(head) + size + 32)


def _digest_of(file: str) -> str | None:
    """The digest of a file the load read, now; None if it is gone or no longer a readable regular file."""
    from fabgen.bounded import read_bytes

    try:
        return hashlib.sha256(read_bytes(file, MAX_SPEC_BYTES)).hexdigest()
    except FabgenError:
        return None


def _serve(entry: _Entry, request: Request, note: Note) -> WriteResult | Drift | None:
    """Write (or compare) the chosen devices' files from a verified entry, re-running their output checks."""
    from fabgen.device_match import device_matches

    header = entry.header
    files: dict[str, str] = {}
    owners: dict[str, tuple[str, str]] = {}
    try:
        with open(entry.path, "rb") as handle:
            for device, (offset, length, digest) in sorted(header["records"].items()):
                if not device_matches(device, request.devices):
                    continue
                handle.seek(entry.blob_offset + offset)
                raw = handle.read(length)
                if len(raw) != length or hashlib.sha256(raw).hexdigest() != digest:
                    raise ValueError(f"record of {device} is damaged")
                for path, target, text in json.loads(zlib.decompress(raw)):
                    files[path] = text
                    owners[path] = (target, device)
    except (OSError, ValueError, TypeError, zlib.error) as exc:
        note(f"ignoring {entry.path.name[:16]}: {exc}")
        return None
    used = {target for target, _ in owners.values()}
    checks = _checks({t: ref for t, ref in header["checks"].items() if t in used})
    problems = [p for path, text in files.items() for p in checks.get(owners[path][0], _no_check)(path, text)]
    if problems:
        raise OutputError(problems)
    return _write(dict(sorted(files.items())), owners, set(header["names"]), header["meta"], request)


def _no_check(path: str, text: str) -> list[Problem]:
    return []


def _checks(refs: dict[str, list[str] | None]) -> dict[str, Callable[[str, str], list[Problem]]]:
    """Each target's output check, imported by the module and name the fill recorded (not the whole registry).

    ``[]`` is a target without a check; ``None`` one whose check has no importable name (a lambda): only
    then is the registry, and with it every target and pydantic, imported.
    """
    import importlib

    found: dict[str, Callable[[str, str], list[Problem]]] = {}
    for target, ref in refs.items():
        check: Any = None
        if ref is None or (ref and not ref[0].startswith("fabgen.targets.")):
            from fabgen.targets.registry import select_targets

            check = select_targets([target])[0].check
        elif ref:
            check = importlib.import_module(ref[0])
            for part in ref[1].split("."):
                check = getattr(check, part)
        if check is not None:
            found[target] = check
    return found


def _check_ref(check: Callable[[str, str], list[Problem]] | None) -> list[str] | None:
    """How :func:`_checks` finds ``check`` again in another process (see there)."""
    if check is None:
        return []
    module, name = getattr(check, "__module__", ""), getattr(check, "__qualname__", "<>")
    return [module, name] if module.startswith("fabgen.targets.") and "<" not in name else None


def _write(files: dict[str, str], owners: dict[str, tuple[str, str]], names: set[str], meta: dict[str, Any],
           request: Request) -> WriteResult | Drift:
    """The tail of :func:`fabgen.pipeline.generate` for a ``--device`` run."""
    from fabgen.device_match import device_matches, require_matches
    from fabgen.writer import check_tree, write_tree

    chosen = set(meta.pop("targets"))

    def in_scope(owner: tuple[str, str]) -> bool:
        return owner[0] in chosen and device_matches(owner[1], request.devices)

    require_matches(names, request.devices, request.out_dir)
    if request.check:
        return check_tree(files, request.out_dir, in_scope=in_scope)
    return write_tree(files, request.out_dir, owners, meta, in_scope=in_scope, force=request.force)


def _fill_and_serve(request: Request, spec_bytes: bytes, path: Path, secret: bytes, note: Note) -> WriteResult | Drift:
    """Plan and render every device of the chosen targets once, store them, then serve this request."""
    from fabgen.bounded import recording_reads
    from fabgen.pipeline import device_names, load_spec, plan_fabric, spec_digest
    from fabgen.targets.registry import select_targets
    from fabgen.targets.render import render_files

    with recording_reads() as reads:
        spec = load_spec(request.spec)
        fabric = plan_fabric(spec)
        chosen = select_targets(request.targets)
        try:
            files, owners = render_files(fabric, request.targets, None, request.templates, jobs=request.jobs)
        except OutputError:
            return _uncached(request)  # another device's output fails: say only what this run's devices would
    spec_real = os.path.realpath(request.spec)
    spec_sha = hashlib.sha256(spec_bytes).hexdigest()
    if (spec_real, spec_sha) not in reads:  # the spec changed between keying and loading: store nothing
        return _serve_memory(files, owners, fabric, spec, chosen, request)
    deps = sorted({(file, digest) for file, digest in reads if file != spec_real})
    by_device: dict[str, list[tuple[str, str, str]]] = {}
    for file, (target, device) in owners.items():
        by_device.setdefault(device, []).append((file, target, files[file]))
    meta = {"fabgen_version": __version__, "spec_sha256": spec_digest(spec), "cluster": spec.cluster.name,
            "targets": sorted(t.name for t in chosen)}
    checks = {t.name: _check_ref(t.check) for t in chosen}
    _store(path, secret, {"schema": SCHEMA, "key": path.name, "fabgen": __version__, "deps": deps, "meta": meta,
                          "names": sorted(device_names(fabric)), "checks": checks}, by_device, note)
    return _serve_memory(files, owners, fabric, spec, chosen, request)


def _serve_memory(files: dict[str, str], owners: Mapping[str, tuple[str, str]], fabric: Any, spec: Any,
                  chosen: Sequence[Any], request: Request) -> WriteResult | Drift:
    """This request's part of a fresh full render (already checked by :func:`render_files`)."""
    from fabgen.device_match import device_matches
    from fabgen.pipeline import device_names, spec_digest

    mine = {p: t for p, t in files.items() if device_matches(owners[p][1], request.devices)}
    meta = {"fabgen_version": __version__, "spec_sha256": spec_digest(spec), "cluster": spec.cluster.name,
            "targets": [t.name for t in chosen]}
    return _write(mine, {p: owners[p] for p in mine}, device_names(fabric), meta, request)


def _store(path: Path, secret: bytes, header: dict[str, Any], by_device: dict[str, list[tuple[str, str, str]]],
           note: Note) -> None:
    """Write the entry atomically (temporary file, then rename), then prune the directory."""
    blob = bytearray()
    records: dict[str, list[Any]] = {}
    for device in sorted(by_device):
        raw = zlib.compress(json.dumps(by_device[device], ensure_ascii=False).encode("utf-8", "surrogatepass"), 1)
        records[device] = [len(blob), len(raw), hashlib.sha256(raw).hexdigest()]
        blob += raw
    text = json.dumps({**header, "records": records}, sort_keys=True).encode()
    head = MAGIC + len(text).to_bytes(8, "big")
    mac = hmac.new(secret, head + text, hashlib.sha256).digest()
    problem = user_cache.atomic_write(path, head + text + mac, bytes(blob))
    if problem:
        note(f"not stored: {problem}")
        return
    prune(path.parent, keep=path.name)


def prune(entries: Path, *, keep: str = "", max_entries: int = MAX_ENTRIES, max_bytes: int = MAX_TOTAL_BYTES) -> None:
    """Drop the least recently used entries beyond this cache's count and size bounds (never ``keep``)."""
    user_cache.prune(entries, keep=keep, max_entries=max_entries, max_bytes=max_bytes)
