"""The per-user cache directory both on-disk caches share: where it is, when it is trusted, how it is written.

Two caches live under one directory: :mod:`fabgen.plan_cache` (a ``--device``
run's rendered files) and :mod:`fabgen.targets.template_cache` (compiled Jinja
templates). They trust the same things for the same reasons, so those rules are
here once:

* where: ``$FABGEN_CACHE_DIR``, else ``$XDG_CACHE_HOME/fabgen``, else
  ``~/.cache/fabgen``; ``FABGEN_CACHE_DIR=off`` (or ``--no-cache``, which runs
  the command inside :func:`caches_off`) turns both off;
* trust: the directory is 0700 and the user's, the 32-byte HMAC key in
  ``secret`` is 0600 and the user's; anything else and the cache is not used,
  since another user who can write there could plant an entry, and one who can
  read the key could forge one;
* writes: a temporary file in the same directory, then :func:`os.replace`, so a
  reader or a concurrent writer sees one whole entry or none;
* size: :func:`prune` keeps the most recently used entries within a count and a
  byte bound.

No jinja2 and no pydantic here: the ``--device`` cache-hit path imports this
module and must stay fast.
"""

from __future__ import annotations

import os
import secrets
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

ENV_DIR = "FABGEN_CACHE_DIR"
SECRET_BYTES = 32
STALE_TEMP_SECONDS = 3600
"""A temporary entry this old belongs to a writer that died; pruning removes it."""

Note = Callable[[str], None]

_off = False
_said: set[str] = set()


def stderr_note(message: str) -> None:
    """One ``fabgen: cache:`` line on stderr (remembered, so :func:`note_once` does not say it again)."""
    _said.add(message)
    print(f"fabgen: cache: {message}", file=sys.stderr)


def note_once(message: str) -> None:
    """:func:`stderr_note` unless this process said it already: a bad directory is one line, not one per template."""
    if message not in _said:
        stderr_note(message)


@contextmanager
def caches_off() -> Iterator[None]:
    """``--no-cache``: inside, :func:`active_cache_dir` is None, so neither cache reads or writes anything."""
    global _off
    before, _off = _off, True
    try:
        yield
    finally:
        _off = before


def cache_dir(environ: dict[str, str] | None = None) -> Path | None:
    """The cache directory, or None when ``FABGEN_CACHE_DIR=off``."""
    env = os.environ if environ is None else environ
    chosen = env.get(ENV_DIR, "")
    if chosen == "off":
        return None
    if chosen:
        return Path(chosen)
    base = env.get("XDG_CACHE_HOME", "")
    return (Path(base) if base and os.path.isabs(base) else Path.home() / ".cache") / "fabgen"


def active_cache_dir() -> Path | None:
    """:func:`cache_dir` of this process's environment, or None inside :func:`caches_off`."""
    return None if _off else cache_dir()


def location_key() -> tuple[object, ...]:
    """What :func:`active_cache_dir` depends on, cheaply: a memo about the directory holds while this is equal.

    ``HOME`` stands for ``Path.home()``'s answer (without it, the password entry, which does not move).
    Building the path costs more than the lookup it saves on a template cache hit.
    """
    env = os.environ
    return _off, env.get(ENV_DIR), env.get("XDG_CACHE_HOME"), env.get("HOME")


def private_dir(path: Path) -> str | None:
    """Create ``path`` 0700 if missing; a problem if it is not a directory of ours that only we can use."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(path)
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    if not stat.S_ISDIR(info.st_mode):
        return f"{path} is not a directory"
    if info.st_uid != os.geteuid():
        return f"{path} is not owned by this user"
    if info.st_mode & 0o077:
        return f"{path} is open to other users (mode {stat.S_IMODE(info.st_mode):o}; want 700)"
    return None


def user_secret(root: Path) -> bytes | str:
    """The per-user HMAC key (created on first use), or why it cannot be trusted."""
    problem = private_dir(root)
    if problem:
        return problem
    file = root / "secret"
    if not os.path.lexists(file):  # written aside and linked in, so a concurrent first run never reads half a key
        try:
            fd, tmp = tempfile.mkstemp(dir=root, prefix=".tmp-secret-")
            try:
                os.write(fd, secrets.token_bytes(SECRET_BYTES))
                os.close(fd)
                with suppress(FileExistsError):
                    os.link(tmp, file)
            finally:
                os.unlink(tmp)
        except OSError as exc:
            return f"{file}: {exc.strerror or exc}"
    try:
        fd = os.open(file, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as exc:
        return f"{file}: {exc.strerror or exc}"
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        key = handle.read(SECRET_BYTES + 1)
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
        return f"{file} is not a regular file owned by this user"
    if info.st_mode & 0o077:
        return f"{file} is readable by other users (mode {stat.S_IMODE(info.st_mode):o}; want 600)"
    if len(key) != SECRET_BYTES:
        return f"{file} is not a {SECRET_BYTES}-byte key"
    return key


def atomic_write(path: Path, *parts: bytes) -> str | None:
    """Write ``parts`` to ``path`` through a temporary file and a rename; why not, if it could not."""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as handle:
                for part in parts:
                    handle.write(part)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError as exc:
        return str(exc.strerror or exc)
    return None


def prune(entries: Path, *, keep: str, max_entries: int, max_bytes: int) -> None:
    """Drop the least recently used entries beyond the count and size bounds (never ``keep``)."""
    rows: list[tuple[float, int, Path]] = []
    for child in entries.iterdir():
        try:
            info = child.stat()
        except OSError:
            continue
        if child.name.startswith(".tmp-"):  # a writer that died mid-write leaves one; a live one is minutes old at most
            if info.st_mtime < time.time() - STALE_TEMP_SECONDS:
                with suppress(OSError):
                    child.unlink()
            continue
        if not child.name.endswith(".lock"):
            rows.append((info.st_mtime, info.st_size, child))
    rows.sort(key=lambda row: (row[2].name == keep, row[0]), reverse=True)  # the one just written counts first
    total = 0
    for count, (_, size, child) in enumerate(rows):
        total += size
        if child.name != keep and (count >= max_entries or total > max_bytes):
            for victim in (child, child.with_name(child.name + ".lock")):
                with suppress(OSError):
                    victim.unlink()
