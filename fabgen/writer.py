"""Write rendered files: atomically, incrementally, and only where fabgen owns them.

The new tree is assembled in a temporary directory beside the output and then
swapped in, so a failure (or a SIGKILL) leaves the previous tree whole. Files
whose content did not change are hard-linked from the old tree, so their mtime
stays and rsync/Ansible see only real changes. ``manifest.json`` lists what
fabgen wrote; anything else in the directory is the operator's and is kept.
"""

from __future__ import annotations

import difflib
import glob
import hashlib
import json
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from fabgen._gc import paused_gc
from fabgen.bounded import MAX_MANIFEST_BYTES, load_json, read_text
from fabgen.dir_placement import DirectoryPlacement
from fabgen.errors import FabgenError, OutputError, Problem

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

MANIFEST = "manifest.json"
_TMP_TAG = ".fabgen-tmp-"
_OLD_TAG = ".fabgen-old-"
_SAFE_PART = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$")
_SAFE_PATH = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}(?:/[A-Za-z0-9_][A-Za-z0-9._-]{0,127})*")
"""A path every part of which is a :data:`_SAFE_PART`."""

Owner = tuple[str, str]
"""(target, device) that produced a file."""


@dataclass
class WriteResult:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


@dataclass
class Drift:
    changed: dict[str, str] = field(default_factory=dict)
    """path -> unified diff."""
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.changed or self.added or self.removed)


def safe_relpath(path: str) -> str:
    """Refuse any output path that could leave the output directory."""
    if _SAFE_PATH.fullmatch(path):  # the common case, without a PurePosixPath per file (it is its own normal form)
        if path == MANIFEST:
            raise OutputError([Problem(f"{MANIFEST} is reserved", file="render")])
        return path
    pure = PurePosixPath(path)
    if pure.is_absolute() or not pure.parts or any(not _SAFE_PART.match(p) for p in pure.parts):
        raise OutputError([Problem(f"refusing unsafe output path {path!r}", file="render")])
    if pure.name == MANIFEST and len(pure.parts) == 1:
        raise OutputError([Problem(f"{MANIFEST} is reserved", file="render")])
    return str(pure)


_sha256 = hashlib.sha256


def sha256(data: bytes) -> str:
    return _sha256(data).hexdigest()


def read_manifest(out_dir: Path) -> dict | None:  # type: ignore[type-arg]
    path = out_dir / MANIFEST
    if path.is_symlink() or not path.is_file():
        return None
    try:  # bounded: an old tree's manifest is input like any other (a deep or huge one must not crash us)
        manifest = load_json(read_text(path, MAX_MANIFEST_BYTES, what="manifest", follow=False), str(path))
    except FabgenError:
        return None
    if not isinstance(manifest, dict) or manifest.get("generator") != "fabgen" or not isinstance(manifest.get("files"), dict):
        return None
    for rel, entry in manifest["files"].items():  # a corrupt or forged entry disowns the whole directory
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k, ""), str) for k in ("target", "device")):
            return None
        if not isinstance(entry.get("sha256", ""), str) or isinstance(entry.get("bytes", 0), bool) \
                or not isinstance(entry.get("bytes", 0), int):
            return None
        try:
            if safe_relpath(rel) != rel:
                return None
        except OutputError:
            return None
    return manifest


def build_manifest(files: Mapping[str, bytes], owners: Mapping[str, Owner], meta: Mapping[str, object],
                   kept: Mapping[str, Mapping[str, object]] | None = None) -> bytes:
    """The manifest of ``files`` plus ``kept`` entries carried over unchanged from the previous manifest."""
    entries: dict[str, Mapping[str, object]] = {
        path: {"sha256": sha256(data), "bytes": len(data), "target": owners[path][0], "device": owners[path][1]}
        for path, data in files.items()
    }
    entries.update(kept or {})
    return _manifest_bytes(entries, meta)


Entry = tuple[str, int, str, str]
"""A file's manifest entry as :class:`TreeWriter` keeps it: (sha256 as ``hexdigest()`` gives it, bytes, target,
device). A tuple rather than a dict: 15,000 of them at 24k, built once each and read once, by :func:`_manifest_bytes`."""

_ENTRY_TEXT = '    %s: {\n      "bytes": %d,\n      "device": %s,\n      "sha256": "%s",\n      "target": %s\n    }'
"""One :data:`Entry` as ``json.dumps(..., indent=2, sort_keys=True)`` prints it inside ``"files"``
(the digest is hex, which JSON never escapes)."""
_PATH_CHARACTERS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-/"
""":data:`_SAFE_PATH`'s characters: none of them is one JSON escapes."""


def _manifest_bytes(entries: Mapping[str, Entry | Mapping[str, object]], meta: Mapping[str, object]) -> bytes:
    """``json.dumps(manifest, indent=2, sort_keys=True)``, byte for byte, without its pure-Python indenting encoder.

    With ``indent`` the json module encodes in Python (1.2 s for a 24k manifest);
    fabgen's own entries (:data:`Entry` tuples, or mappings of exactly those four
    keys) are printed here with the C string quoting, anything else (a kept entry
    with other keys) by ``json.dumps`` itself. Paths are printed between quotes
    as they are when all of them together hold only :data:`_SAFE_PATH`'s
    characters (every path of a :class:`TreeWriter` or an old manifest, which
    both pass :func:`safe_relpath`): one C pass over their join rather than a
    quote call per path. The head is dumped with ``"files": 0`` and that line
    replaced: a raw newline followed by it can only be the structure, never
    inside a string (json escapes newlines).
    """
    head = json.dumps({"generator": "fabgen", **meta, "files": 0}, indent=2, sort_keys=True)
    if not entries:
        return (head.replace('\n  "files": 0', '\n  "files": {}', 1) + "\n").encode()
    quote = json.encoder.encode_basestring_ascii
    items = sorted(entries.items())  # paths are unique: the entries themselves are never compared
    joined = "".join(entries)
    if joined.isascii() and not joined.encode().translate(None, _PATH_CHARACTERS):
        parts = [f'    "{path}": {{\n      "bytes": {e[1]},\n      "device": {quote(e[3])},\n      "sha256": "{e[0]}",'
                 f'\n      "target": {quote(e[2])}\n    }}' if isinstance(e, tuple)
                 else _mapping_entry_text(f'"{path}"', e) for path, e in items]  # _ENTRY_TEXT, in an f-string
    else:
        text = _ENTRY_TEXT
        parts = [text % (quote(path), e[1], quote(e[3]), e[0], quote(e[2])) if isinstance(e, tuple)
                 else _mapping_entry_text(quote(path), e) for path, e in items]
    files = "{\n" + ",\n".join(parts) + "\n  }"
    return (head.replace('\n  "files": 0', '\n  "files": ' + files, 1) + "\n").encode()


def _mapping_entry_text(quoted_path: str, entry: Mapping[str, object]) -> str:
    """One entry kept from an old manifest, as ``json.dumps(..., indent=2, sort_keys=True)`` prints it."""
    quote = json.encoder.encode_basestring_ascii
    size, device, digest, target = entry.get("bytes"), entry.get("device"), entry.get("sha256"), entry.get("target")
    if (len(entry) == 4 and type(size) is int and type(device) is str and type(digest) is str
            and type(target) is str):
        return (f'    {quoted_path}: {{\n      "bytes": {size},\n      "device": {quote(device)},\n'
                f'      "sha256": {quote(digest)},\n      "target": {quote(target)}\n    }}')
    body = json.dumps(entry, indent=2, sort_keys=True).replace("\n", "\n    ")
    return f"    {quoted_path}: {body}"


def _io_pool(workers: int) -> ThreadPoolExecutor:
    """Threads for latency-bound file work; imported here, not at the top, because a fresh write uses none
    (``concurrent.futures`` brings ``threading`` and ``logging``: a few ms of every ``fabgen`` start)."""
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(max_workers=workers)


def remove_tree(root: Path) -> None:
    """``rm -rf root`` without following symlinks, removing directories level by level in threads.

    Removing an empty directory costs ~3 ms of I/O latency on some VM disks (a
    24k-GPU tree has 3,000 host directories: 10 s serially); in parallel the
    latencies overlap.
    """
    if root.is_symlink() or not root.exists():
        if root.is_symlink():
            root.unlink()
        return
    top = str(root)
    directories, others = _listing(top)
    for rel, _ in others:
        os.unlink(f"{top}/{rel}")
    by_depth: dict[int, list[str]] = {}
    for rel in directories:
        by_depth.setdefault(rel.count("/") + bool(rel), []).append(f"{top}/{rel}" if rel else top)
    with _io_pool(_IO_THREADS) as pool:
        for depth in sorted(by_depth, reverse=True):  # children first; siblings in a few slices, not a task each
            list(pool.map(_remove_directories, _slices(by_depth[depth])))


def _remove_directories(paths: list[str]) -> None:
    for path in paths:
        os.rmdir(path)


def _slices(items: list[str]) -> list[list[str]]:
    """``items`` in at most :data:`_IO_THREADS` slices: a pool task costs more CPU than a ``mkdir`` or
    ``rmdir`` on a fast disk, and a few slices still overlap a slow disk's latencies."""
    size = -(-len(items) // _IO_THREADS) or 1
    return [items[i:i + size] for i in range(0, len(items), size)]


def _listing(top: str) -> tuple[list[str], list[tuple[str, bool]]]:
    """Every directory under ``top`` (``""`` for itself), parents first, and every other entry with whether it is
    a symlink: paths relative to ``top``, no symlink followed.

    ``os.walk``'s answer from ``scandir`` alone: the entry types come with the
    listing (no ``lstat`` per directory to tell a symlink, no ``relpath`` per
    directory); as in ``os.walk``, a directory that cannot be listed is left out.
    """
    directories: list[str] = []
    others: list[tuple[str, bool]] = []
    pending = [""]
    while pending:
        rel = pending.pop()
        try:
            scan = os.scandir(f"{top}/{rel}" if rel else top)
        except OSError:
            if not rel:
                raise
            continue
        directories.append(rel)
        prefix = f"{rel}/" if rel else ""
        with scan:
            for entry in scan:
                if entry.is_dir(follow_symlinks=False):
                    pending.append(prefix + entry.name)
                else:
                    others.append((prefix + entry.name, entry.is_symlink()))
    return directories, others


def recover(out_dir: Path) -> None:
    """Undo what a killed run left: restore a half-swapped tree, delete temporaries."""
    parent, name = out_dir.parent, out_dir.name
    if not parent.is_dir():
        return
    name = glob.escape(name)  # an output named "*" must not claim the leftovers of every sibling output
    olds = sorted(parent.glob(f".{name}{_OLD_TAG}*"))
    if olds and not out_dir.exists():
        os.rename(olds[-1], out_dir)
        olds = olds[:-1]
    for leftover in [*olds, *parent.glob(f".{name}{_TMP_TAG}*")]:
        if leftover.is_dir() and not leftover.is_symlink():
            _quietly_remove(leftover)


def _existing(out_dir: Path, rel: str) -> bytes | None:
    """Current content of a regular file inside out_dir, never following a symlink."""
    current = out_dir
    for part in PurePosixPath(rel).parts:
        current = current / part
        if current.is_symlink():
            return None
    try:
        if not current.is_file():
            return None
        return current.read_bytes()
    except OSError:
        return None


@paused_gc()
def write_tree(
    files: Mapping[str, str],
    out_dir: Path,
    owners: Mapping[str, Owner],
    meta: Mapping[str, object],
    *,
    in_scope: Callable[[Owner], bool] | None = None,
    force: bool = False,
) -> WriteResult:
    """Replace ``out_dir`` with ``files`` (plus kept files), atomically.

    The collector is paused: after planning a large fabric, every allocation here
    would otherwise trigger rescans of half a million live plan objects.

    ``in_scope`` says which previously generated files this run is responsible
    for (``--only``/``--device``); generated files outside it are carried over.
    """
    writer = TreeWriter(Path(out_dir), meta, in_scope=in_scope, force=force)
    try:
        for path in sorted(files):
            writer.add(path, files[path].encode("utf-8"), owners[path])
        return writer.finish()
    except BaseException:
        writer.abort()
        raise


class TreeWriter:
    """:func:`write_tree` one file at a time, so a caller can hand over each file as soon as it is rendered.

    Files go straight into the temporary tree beside ``out_dir`` (hard-linked from
    the old tree when unchanged); only their path, hash, size and owner are kept,
    so memory holds one file, not the whole output (at 262,144 GPUs the texts and
    their encodings were several GB). Nothing visible changes until
    :meth:`finish` swaps the tree in; :meth:`abort` (or any failure) leaves the
    old tree as it was.

    Refusals keep :func:`write_tree`'s order and wording: an unsafe path, then
    what is wrong with ``out_dir`` itself, then foreign entries in the way, all
    raised by :meth:`finish`, after every file was handed over, so a render
    failure found later in the stream is still the error the caller reports
    first. Until a refusal is known the old tree is only read, never changed.
    """

    def __init__(self, out_dir: Path, meta: Mapping[str, object], *,
                 in_scope: Callable[[Owner], bool] | None = None, force: bool = False) -> None:
        self.out_dir, self.meta, self.in_scope, self.force = out_dir, meta, in_scope, force
        self.entries: dict[str, Entry] = {}
        """path -> manifest entry of each file handed over (sha256, bytes, target, device)."""
        self.unchanged: set[str] = set()
        self.refusal: OutputError | None = None
        """What is wrong with ``out_dir`` itself (found first, raised by :meth:`finish` after any unsafe path)."""
        self._unsafe: OutputError | None = None
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        recover(out_dir)
        self.exists = out_dir.exists()
        self.old: dict | None = None  # type: ignore[type-arg]
        if out_dir.is_symlink():
            self.refusal = OutputError([Problem(
                "is a symlink; fabgen does not write through symlinks (name the real directory)", file=str(out_dir))])
        elif self.exists and not out_dir.is_dir():
            self.refusal = OutputError([Problem("exists and is not a directory", file=str(out_dir))])
        elif self.exists:
            self.old = read_manifest(out_dir)
            if self.old is None and not force and any(out_dir.iterdir()):
                self.refusal = OutputError([Problem(
                    f"directory is not empty and has no fabgen {MANIFEST} (or an invalid one); refusing to write "
                    "into it (use --force)", file=str(out_dir))])
        self._old_root = str(out_dir) if self.exists and self.refusal is None else None
        self.tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}{_TMP_TAG}", dir=out_dir.parent))
        self._base = str(self.tmp)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(self.tmp, 0o777 & ~umask)  # mkdtemp makes 0700; the output is an ordinary directory
        self._placement = DirectoryPlacement(self._base)
        self._dirs: set[str] = {""}
        self._real_dirs: dict[str, bool] = {}
        """Directory under the old tree -> it and its parents are directories, no symlink (one lstat each a run)."""
        self._old_regular: set[str] = set()
        """Paths handed over whose old entry :meth:`add` found to be a regular file with other content, reached
        through directories only: what :func:`_refuse_foreign_entries` would ``lstat`` them and their parents
        to learn (the unchanged ones, in :attr:`unchanged`, are such files too)."""

    def add(self, path: str, data: bytes, owner: Owner, digest: str | None = None) -> None:
        """Place one file in the new tree; a path handed over twice keeps the last content (as a dict update).

        ``digest``: ``sha256(data).hexdigest()`` when the caller has it already (:mod:`fabgen.encoded`)."""
        if self._unsafe is not None:
            return  # refused already: the rest is handed over only so that its render errors come first
        if path != MANIFEST and _SAFE_PATH.fullmatch(path):
            rel = path  # safe_relpath's common case, without its call (15,000 times at 24k)
        else:
            try:
                rel = safe_relpath(path)
            except OutputError as error:
                self._unsafe = error
                return
        if self.refusal is not None:
            return  # finish() refuses: write nothing, but still look at every path (an unsafe one is said first)
        entries = self.entries
        if rel in entries:
            self._replace(rel)
        parent = rel.rpartition("/")[0]
        if parent not in self._dirs:
            self._make_parents(parent)
        old = self._old_root
        found = _ABSENT if old is None else _old_file(old, rel, data, self._real_dirs)
        if found is _SAME:
            os.link(f"{old}/{rel}", f"{self._base}/{rel}")
            self.unchanged.add(rel)
        else:
            if found is _OTHER:
                self._old_regular.add(rel)
            _write_new(f"{self._base}/{rel}", data)
        entries[rel] = (digest or _sha256(data).hexdigest(), len(data), owner[0], owner[1])

    def _replace(self, rel: str) -> None:
        os.unlink(f"{self._base}/{rel}")
        self.unchanged.discard(rel)
        self._old_regular.discard(rel)

    def _make_parents(self, rel: str) -> None:
        missing: list[str] = []
        while rel not in self._dirs:
            missing.append(rel)
            rel = rel.rpartition("/")[0]
        for part in reversed(missing):
            try:
                self._placement.mkdir(part)
            except FileExistsError:
                if not os.path.isdir(f"{self._base}/{part}"):
                    raise
            self._dirs.add(part)

    def finish(self) -> WriteResult:
        """Refuse what :func:`write_tree` refuses, carry over what this run does not own, write the manifest, swap."""
        try:
            return self._finish()
        except BaseException:
            self.abort()
            raise

    def _finish(self) -> WriteResult:
        for refused in (self._unsafe, self.refusal):
            if refused is not None:
                raise refused
        out_dir, tmp, old = self.out_dir, self.tmp, self.old
        old_files: dict[str, Owner] = {
            p: (e.get("target", ""), e.get("device", "")) for p, e in (old or {}).get("files", {}).items()
        }
        if self.exists:
            _refuse_foreign_entries(out_dir, self.entries, old_files, self.force, self._old_regular | self.unchanged,
                                    [rel for rel, real in self._real_dirs.items() if real])
        result = WriteResult()
        for rel in sorted(self.entries):
            (result.unchanged if rel in self.unchanged else result.written).append(rel)
        all_owners: dict[str, Owner] = {}
        if self.exists:
            _carry_over(out_dir, tmp, self.entries, old_files, self.in_scope, all_owners, result)
        # Files of other devices (a --device/--only run) keep their entries: no need to re-read them.
        old_entries = (old or {}).get("files", {})
        kept = {p: old_entries[p] for p in all_owners if p in old_entries}
        manifest = _manifest_bytes({**self.entries, **kept} if kept else self.entries, self.meta)
        if _existing(out_dir, MANIFEST) == manifest:
            os.link(out_dir / MANIFEST, tmp / MANIFEST)  # unchanged: keep its mtime like any other file
        else:
            (tmp / MANIFEST).write_bytes(manifest)
        _swap(tmp, out_dir)
        return result

    def abort(self) -> None:
        """Drop the temporary tree; the old one was never touched."""
        if self.tmp.exists():
            _quietly_remove(self.tmp)


def _write_new(dest: str, data: bytes) -> None:
    fd = os.open(dest, _CREATE, 0o666)
    try:
        written = os.write(fd, data)  # one call for all of it but on a signal or a full disk (then it raises)
        if written != len(data):
            view = memoryview(data)[written:]
            while view:
                view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def _refuse_foreign_entries(out_dir: Path, new: Collection[str], old_files: Mapping[str, Owner], force: bool,
                            regular: Collection[str] = (), directories: Collection[str] = ()) -> None:
    """Refuse to replace what fabgen did not write: a file, symlink or directory where a new file (or its folder) goes.

    Generated files listed in the old manifest are fabgen's to replace. ``force``
    lets fabgen replace other files and symlinks (the link, never what it points
    to); a directory in the way of a file is never removed.

    ``regular`` (new paths that are regular files in the old tree, reached through
    directories only) and ``directories`` (old-tree directories whose every parent
    is one too) are what :meth:`TreeWriter.add` already learnt from its own
    ``open(O_NOFOLLOW)``/``fstat`` and ``lstat`` calls; they stand in for the
    ``lstat`` per path and parent here (45,000 at 24k), the verdicts the same.
    """
    kinds: dict[str, str] = dict.fromkeys(directories, "directory")
    kinds.update(dict.fromkeys(regular, "file"))
    root = str(out_dir)

    def kind(rel: str) -> str:
        if rel not in kinds:
            try:
                mode = os.lstat(f"{root}/{rel}").st_mode
            except FileNotFoundError:
                mode = None
            except NotADirectoryError:
                mode = None
            kinds[rel] = ("missing" if mode is None else "symlink" if stat.S_ISLNK(mode)
                          else "directory" if stat.S_ISDIR(mode) else "file")
        return kinds[rel]

    problems: list[Problem] = []
    reported: set[str] = set()
    for rel in sorted(new):
        if kinds.get(rel) == "file" and (force or rel in old_files):
            continue  # a generated file of the old tree (or --force): the walk below would find nothing in the way
        parts = rel.split("/")  # new paths are safe_relpath's normal form already
        for depth in range(1, len(parts) + 1):
            here = "/".join(parts[:depth])
            found = kind(here)
            last = depth == len(parts)
            if found == "missing":
                break
            if found == "directory" and not last:
                continue
            if here in reported:
                break
            reported.add(here)
            if found == "directory":
                problems.append(Problem(f"{here} is a directory fabgen did not create, where it writes a file; "
                                        "move it away", file=str(out_dir)))
            elif not force and not (found == "file" and here in old_files):
                what = "a symlink" if found == "symlink" else "a file fabgen did not create"
                needs = "writes this file" if last else "needs a directory"
                problems.append(Problem(f"{here} is {what}, where fabgen {needs}; move it away (or use --force "
                                        "to replace it)", file=str(out_dir)))
            break
        if len(problems) >= 20:
            break
    if problems:
        raise OutputError(problems)


_IO_THREADS = 16
"""File creation and directory removal are latency-bound on VM disks; threads overlap the waits."""


def _make_dirs(root: Path, rels: set[str]) -> None:
    """Create every directory (and its parents) under root, shallowest first, siblings in parallel."""
    wanted: set[str] = set()
    for rel in rels:
        while rel and rel not in wanted:
            wanted.add(rel)
            rel = rel.rpartition("/")[0]
    by_depth: dict[int, list[str]] = {}
    for rel in wanted:
        by_depth.setdefault(rel.count("/"), []).append(rel)
    base = str(root)

    def make(part: list[str]) -> None:
        for rel in part:
            try:
                os.mkdir(f"{base}/{rel}")
            except FileExistsError:
                if not os.path.isdir(f"{base}/{rel}"):
                    raise

    with _io_pool(_IO_THREADS) as pool:
        for depth in sorted(by_depth):  # parents first; siblings in a few slices, not a task per directory
            list(pool.map(make, _slices(sorted(by_depth[depth]))))


_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
_READ = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
"""``O_NONBLOCK``: an operator's FIFO where a generated file was must not hang the run (regular files ignore it)."""


_ABSENT, _OTHER, _SAME = "absent", "other", "same"
"""What :func:`_old_file` found: no regular file reached through directories only (missing, a symlink, a
directory, unreadable), a regular file with other content, or one holding exactly the new bytes."""


def _old_file(old: str, rel: str, data: bytes, real_dirs: dict[str, bool]) -> str:
    """Whether the old tree holds exactly ``data`` at ``rel`` in a regular file reached through no symlink
    (:data:`_SAME`), another regular file there (:data:`_OTHER`), or neither (:data:`_ABSENT`).

    :func:`_existing`'s answer with one ``lstat`` per directory per run
    (remembered in ``real_dirs``) and a size comparison before any read.
    """
    parent = rel.rpartition("/")[0]
    if parent and not _real_dir(old, parent, real_dirs):
        return _ABSENT
    try:
        fd = os.open(f"{old}/{rel}", _READ)
    except OSError:
        return _ABSENT
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return _ABSENT
        if info.st_size != len(data):
            return _OTHER
        chunks: list[bytes] = []
        got = 0
        while got < len(data):
            chunk = os.read(fd, len(data) - got)
            if not chunk:
                return _OTHER
            chunks.append(chunk)
            got += len(chunk)
        return _SAME if b"".join(chunks) == data else _OTHER
    finally:
        os.close(fd)


def _real_dir(old: str, rel: str, real_dirs: dict[str, bool]) -> bool:
    """``rel`` and each of its parents under ``old`` is a directory, not a symlink to one."""
    known = real_dirs.get(rel)
    if known is None:
        head = rel.rpartition("/")[0]
        try:
            known = (not head or _real_dir(old, head, real_dirs)) and stat.S_ISDIR(os.lstat(f"{old}/{rel}").st_mode)
        except OSError:
            known = False
        real_dirs[rel] = known
    return known


def _carry_over(out_dir: Path, tmp: Path, new: Collection[str], old_files: Mapping[str, Owner],
                in_scope: Callable[[Owner], bool] | None, owners: dict[str, Owner], result: WriteResult) -> None:
    """Bring over what this run does not own: other devices' files (scoped runs) and the operator's files."""
    carried: list[tuple[str, bool]] = []
    for rel, is_link in _listing(str(out_dir))[1]:
        if rel == MANIFEST or rel in new:
            continue
        if rel in old_files:
            owner = old_files[rel]
            if in_scope is None or in_scope(owner):
                result.removed.append(rel)
                continue
            owners[rel] = owner
        dest = tmp / rel
        if dest.exists() or dest.is_symlink():
            continue  # the new output occupies this path; the old entry was not a file of ours
        carried.append((rel, is_link))
    result.removed.sort()  # the listing's order is the filesystem's
    _make_dirs(tmp, {str(PurePosixPath(rel).parent) for rel, _ in carried} - {"."})

    def bring(item: tuple[str, bool]) -> None:
        rel, is_link = item
        source, dest = os.path.join(out_dir, rel), os.path.join(tmp, rel)
        if is_link:
            os.symlink(os.readlink(source), dest)
        else:
            os.link(source, dest)

    with _io_pool(_IO_THREADS) as pool:
        list(pool.map(bring, carried))


def _swap(tmp: Path, out_dir: Path) -> None:
    if not out_dir.exists():
        os.rename(tmp, out_dir)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}{_OLD_TAG}", dir=out_dir.parent))
    os.rmdir(old)
    os.rename(out_dir, old)
    os.rename(tmp, out_dir)
    _quietly_remove(old)


def _quietly_remove(path: Path) -> None:
    """Best effort: what is left is removed by :func:`recover` on the next run."""
    try:
        remove_tree(path)
    except OSError:
        shutil.rmtree(path, ignore_errors=True)


def check_tree(files: Mapping[str, str], out_dir: Path, *, in_scope: Callable[[Owner], bool] | None = None) -> Drift:
    """Compare rendered files with the tree on disk; write nothing."""
    drift = Drift()
    old = read_manifest(out_dir) if out_dir.is_dir() else None
    for rel, text in sorted(files.items()):
        current = _existing(out_dir, safe_relpath(rel))
        if current is None:
            drift.added.append(rel)
        elif current != text.encode():
            before = current.decode("utf-8", errors="replace").splitlines(keepends=True)
            after = text.splitlines(keepends=True)
            drift.changed[rel] = "".join(difflib.unified_diff(before, after, f"a/{rel}", f"b/{rel}"))
    for rel, entry in sorted((old or {}).get("files", {}).items()):
        owner = (entry.get("target", ""), entry.get("device", ""))
        if rel not in files and (in_scope is None or in_scope(owner)):
            drift.removed.append(rel)
    return drift
