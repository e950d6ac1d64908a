"""Read untrusted files with a bound on everything: kind, size, nesting, rows, entries.

Every file fabgen reads that a user or a device supplied (the spec, wiring
captures, a deployed tree, ``check-topo``/``check-sonic`` inputs, an old
``manifest.json``) goes through this module, so one place decides:

* **only regular files are opened.** ``st_size`` is 0 for ``/dev/zero`` and a
  FIFO blocks on ``open``, so a size check alone is no bound: the file is opened
  with ``O_NONBLOCK`` (a FIFO without a writer does not hang the open) and
  refused unless ``fstat`` says it is a regular file;
* **sizes are checked twice**: from ``fstat`` before reading, and while reading
  (at most ``limit + 1`` bytes are read, so a file that grows, or lies, cannot
  exhaust memory);
* **directory walks never leave the tree**: links are not followed into
  directories, and a linked file counts only when its target is a regular file
  inside the walked directory;
* **JSON is parsed with a depth limit and, where asked, without duplicate keys**
  (Python's ``json`` keeps the last of two equal keys, silently hiding the first:
  a cable in LLDP output, a port in ``config_db.json``).

Problems are :class:`~fabgen.errors.FabgenError` with the file (and line where
one is known), never a traceback.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Final

from fabgen.errors import FabgenError, Problem

__all__ = [
    "MAX_CABLING_ROWS",
    "MAX_DEPLOYED_BYTES",
    "MAX_JSON_DEPTH",
    "MAX_MANIFEST_BYTES",
    "MAX_TEMPLATE_BYTES",
    "MAX_WALK_FILES",
    "MAX_WIRING_BYTES",
    "MAX_XML_BYTES",
    "DuplicateKey",
    "duplicate_position",
    "inside",
    "jobs_problem",
    "json_depth",
    "load_json",
    "max_jobs",
    "no_duplicates",
    "read_bytes",
    "read_text",
    "walk_files",
    "xml_declaration_problem",
]

MAX_WIRING_BYTES: Final = 32 * 1024 * 1024
"""Largest LLDP capture or cabling CSV (32 MiB). ``lldpctl -f json`` of a 64-port switch is ~0.1 MB; the
24k-GPU cluster's whole ``cabling.csv`` is ~4 MB."""
MAX_CABLING_ROWS: Final = 500_000
"""Most data rows of one cabling CSV: the 131k-GPU fabric has ~400,000 cables."""
MAX_WALK_FILES: Final = 100_000
"""Most files taken from one directory walk (a wiring directory or a deployed tree; the 24k tree has 11,267)."""
MAX_DEPLOYED_BYTES: Final = 16 * 1024 * 1024
"""Largest deployed file read back (a 24k-cluster EOS spine configuration is ~0.3 MB)."""
MAX_MANIFEST_BYTES: Final = 64 * 1024 * 1024
"""Largest ``manifest.json`` of an old output tree (the 131k-GPU tree's is ~11 MB)."""
MAX_XML_BYTES: Final = 4 * 1024 * 1024
"""Largest NCCL topology XML given to ``check-topo`` (NCCL's parser takes 256 nodes, a few kB)."""
MAX_TEMPLATE_BYTES: Final = 1024 * 1024
"""Largest user template (``--templates DIR``) read; fabgen's largest is ~25 kB."""
MAX_JSON_DEPTH: Final = 64
"""Deepest nesting of JSON arrays and objects (LLDP output nests ~8 levels, config_db 3, a manifest 3)."""

def max_jobs() -> int:
    """Most render workers: twice the CPUs this process may run on (``-j 300`` once forked 302 processes on 2 cores)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return 2 * max(cpus, 1)


def jobs_problem(jobs: object) -> str | None:
    """Why ``jobs`` is no worker count (a whole number from 1 to :func:`max_jobs`), or None."""
    if isinstance(jobs, bool) or not isinstance(jobs, int):
        return f"must be a whole number, got {type(jobs).__name__}"
    if not 1 <= jobs <= max_jobs():
        return f"must be between 1 and {max_jobs()} (twice the CPUs), got {jobs}"
    return None


_OPEN_FLAGS: Final = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
_CHUNK: Final = 1024 * 1024


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


_reads: list[tuple[str, str]] | None = None
"""While :func:`recording_reads` runs: (real path, sha256) of every file :func:`read_bytes` returned."""


@contextlib.contextmanager
def recording_reads() -> Iterator[list[tuple[str, str]]]:
    """Note every file read (and the digest of what was read) inside the block.

    Why: the one-device cache (:mod:`fabgen.plan_cache`) must know every file a
    spec's load read (the spec, its IPAM file, whatever a later feature
    includes) to tell a stale entry; recording here, where every bounded read
    passes, keeps that list complete without each reader reporting itself.
    Not for threads: one recording at a time per process.
    """
    global _reads
    previous, _reads = _reads, []
    try:
        yield _reads
    finally:
        _reads = previous


def read_bytes(path: Path | str, limit: int, *, what: str = "file", follow: bool = True) -> bytes:
    """The bytes of regular file ``path``, refusing anything else and anything above ``limit`` bytes.

    ``follow=False`` refuses a symbolic link itself (``O_NOFOLLOW``), for trees
    whose links must not lead out (a deployed tree).
    """
    file = str(path)
    flags = _OPEN_FLAGS | (0 if follow else getattr(os, "O_NOFOLLOW", 0))
    try:
        fd = os.open(file, flags)
    except FileNotFoundError:
        raise FabgenError([Problem("no such file", file=file)]) from None
    except IsADirectoryError:
        raise FabgenError([Problem(f"is a directory, not a {what}", file=file)]) from None
    except OSError as exc:
        if not follow and os.path.islink(file):
            raise FabgenError([Problem(f"is a symbolic link; not followed (a {what} must be a regular file)",
                                       file=file)]) from None
        raise FabgenError([Problem(f"cannot read: {exc.strerror or exc}", file=file)]) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = _kind(info.st_mode)
            message = f"is a directory, not a {what}" if kind == "a directory" else \
                f"is {kind}, not a regular file; refusing to read it as a {what}"
            raise FabgenError([Problem(message, file=file)])
        if info.st_size > limit:
            raise FabgenError([Problem(
                f"{what} is {info.st_size} bytes, larger than the {limit}-byte limit; refusing to read it",
                file=file)])
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise FabgenError([Problem(f"{what} grew past the {limit}-byte limit while being read",
                                           file=file)])
        data = b"".join(chunks)
        if _reads is not None:
            _reads.append((os.path.realpath(file), hashlib.sha256(data).hexdigest()))
        return data
    except OSError as exc:
        raise FabgenError([Problem(f"cannot read: {exc.strerror or exc}", file=file)]) from None
    finally:
        os.close(fd)


def decode_utf8(data: bytes, file: str, *, bom: bool = False, what: str = "not UTF-8 text") -> str:
    """``data`` as UTF-8 (``bom=True`` drops a leading BOM); a bad byte is a problem at its line and column."""
    try:
        return data.decode("utf-8-sig" if bom else "utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise FabgenError([Problem(f"{what} (byte 0x{data[exc.start]:02x})", file=file, line=line,
                                   col=col)]) from None


def read_text(path: Path | str, limit: int, *, what: str = "file", bom: bool = False, follow: bool = True) -> str:
    """:func:`read_bytes`, decoded as UTF-8."""
    return decode_utf8(read_bytes(path, limit, what=what, follow=follow), str(path), bom=bom)


def inside(root: Path | str, path: Path | str) -> bool:
    """Does ``path``, all links resolved, lie within ``root`` (resolved too)?"""
    top = os.path.realpath(root)
    real = os.path.realpath(path)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def walk_files(top: Path | str, *, keep: Callable[[str], bool] = lambda name: True,
               limit: int = MAX_WALK_FILES) -> tuple[list[Path], list[Problem]]:
    """Files under ``top`` in sorted order, without leaving it; hidden entries skipped.

    Directory links are never descended into. A linked file is taken only if
    its target is a regular file inside ``top``; other links, and entries that
    are not regular files (FIFOs, devices, sockets), are returned as problems
    rather than opened. More than ``limit`` files is a problem too.
    """
    found: list[Path] = []
    problems: list[Problem] = []
    for directory, dirs, files in os.walk(top, followlinks=False):
        for name in sorted(dirs):
            if not name.startswith(".") and os.path.islink(os.path.join(directory, name)):
                problems.append(Problem("is a symbolic link to a directory; not followed", file=os.path.join(directory,
                                                                                                          name)))
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not os.path.islink(os.path.join(directory, d)))
        for name in sorted(files):
            if name.startswith(".") or not keep(name):
                continue
            path = Path(directory, name)
            try:
                info = os.stat(path) if inside(top, path) else None
            except OSError:
                info = None
            if path.is_symlink() and info is None:
                problems.append(Problem("is a symbolic link leading out of the directory (or nowhere); not followed",
                                        file=str(path)))
                continue
            if info is None or not stat.S_ISREG(info.st_mode):
                kind = _kind(info.st_mode) if info is not None else "unreadable"
                problems.append(Problem(f"is {kind}, not a regular file; skipped", file=str(path)))
                continue
            found.append(path)
            if len(found) > limit:
                problems.append(Problem(f"more than {limit} files; refusing the rest", file=str(top)))
                return found[:limit], problems
    return found, problems


_XML_DECLARATION = re.compile(r"<!(DOCTYPE|ENTITY)\b", re.IGNORECASE)


def xml_declaration_problem(text: str, file: str) -> Problem | None:
    """A problem when XML text declares a DOCTYPE or entities, which no input fabgen reads needs.

    External entities read local files or the network (XXE), internal ones
    multiply (a "billion laughs"); NCCL's own parser reads neither. Refused
    before any XML parser sees the text.
    """
    match = _XML_DECLARATION.search(text)
    if match is None:
        return None
    line = text.count("\n", 0, match.start()) + 1
    col = match.start() - (text.rfind("\n", 0, match.start()) + 1) + 1
    return Problem(f"markup declaration <!{match.group(1).upper()} is not allowed (external entities read files, "
                   "internal ones multiply; NCCL's parser reads neither)", file=file, line=line, col=col)


class DuplicateKey(ValueError):
    """Raised by :func:`no_duplicates`; carries the repeated key."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` that refuses a repeated key instead of keeping the last."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKey(key)
        out[key] = value
    return out


def json_depth(data: Any) -> int:
    """Nesting depth of parsed JSON (a scalar is 0), computed without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Iterable[Any] = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        depth += 1
        deepest = max(deepest, depth)
        stack.extend((child, depth) for child in children if isinstance(child, dict | list))
    return deepest


def duplicate_position(text: str, key: str, start: int = 0) -> tuple[int, int]:
    """Where the second ``"key":`` after ``start`` is written (the one JSON would keep): a good guess for messages."""
    needle = re.compile(re.escape(json.dumps(key)) + r"\s*:")
    matches = []
    for match in needle.finditer(text, start):
        matches.append(match)
        if len(matches) == 2:
            break
    if len(matches) < 2:
        return 0, 0
    offset = matches[1].start()
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def load_json(text: str, file: str, *, max_depth: int = MAX_JSON_DEPTH, duplicates: bool = False) -> Any:
    """``json.loads`` for untrusted text: bounded nesting, no ``NaN``, and duplicate keys refused unless allowed.

    A syntax error is a problem at its line and column. ``duplicates=True``
    keeps Python's last-one-wins, for inputs where a repeat hides nothing.
    """
    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    try:
        data = json.loads(text, parse_constant=constant,
                          object_pairs_hook=None if duplicates else no_duplicates)
    except DuplicateKey as exc:
        line, col = duplicate_position(text, exc.key)
        raise FabgenError([Problem(f"duplicate key {json.dumps(exc.key)[:80]}; JSON keeps only the last one, "
                                   "hiding the first", file=file, line=line, col=col)]) from None
    except json.JSONDecodeError as exc:
        raise FabgenError([Problem(f"invalid JSON: {exc.msg}", file=file, line=exc.lineno, col=exc.colno)]) from None
    except RecursionError:
        raise FabgenError([Problem(f"JSON nested deeper than {max_depth} levels", file=file)]) from None
    except ValueError as exc:
        raise FabgenError([Problem(f"invalid JSON: {exc}", file=file)]) from None
    if json_depth(data) > max_depth:
        raise FabgenError([Problem(f"JSON nested deeper than {max_depth} levels", file=file)])
    return data
