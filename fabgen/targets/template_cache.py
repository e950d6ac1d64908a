"""Compiled Jinja templates kept on disk, authenticated, so a process renders without compiling.

Why: compiling fabgen's 28 templates (lex, parse, code generation, Python's
``compile``) costs about 80 ms of CPU per process, more than rendering a small
target's files (nccl-topo, host-boot, the NIC scripts), and every ``fabgen
generate`` paid it again. Jinja's :class:`~jinja2.BytecodeCache` hook stores the
compiled module code; this one stores it in :mod:`fabgen.user_cache`'s
directory (``templates-v2/``; the number is ``SCHEMA``), under its rules (0700 directory, 0600 per-user
secret, both the user's; atomic writes; a size bound).

Never stale. An entry's name is a SHA-256 over the template's name and file
path and over what decides the code Jinja generates from a source: Jinja's
version and bytecode format, Python's bytecode magic number and marshal
version, the environment's classes (name and, for fabgen's own, the source of
their module: ``LimitedSandbox`` rewrites every loop of a user's template, and
an edit to that rewrite must not be served the old code), the lexer and code
generator options, the filters' and tests' names and how each is called
(Jinja bakes ``pass_context`` and the like into the code), the autoescape
decision for that name, and the finalize hook. The entry also holds the
SHA-256 of the template source it was compiled from, compared with the source
the loader just read (an edited template, overlay or shipped, is a miss and is
compiled again; Jinja's own bucket check, sha1, is replaced, not weakened).

Safe against tampering. ``marshal`` data is code: it is loaded only after the
entry's HMAC-SHA256 (under the per-user secret) checks, over the magic, a
header naming the entry and the source digest, and the code. A bad MAC, a
truncated file, an entry under another name (two entries' files swapped), a
source digest that differs: the template compiles as if there were no cache and
the fresh code replaces the entry. An entry that cannot be trusted gets one
``fabgen: cache:`` line on stderr, as :mod:`fabgen.plan_cache` says of its own
entries; so does a directory the cache will not use, once per process. Jinja's
own :class:`~jinja2.bccache.Bucket` reader is not used: it unpickles the
checksum before anything is checked.

One bundle for the shipped templates. A hit on an entry still cost 100 to
250 us (open, read, HMAC, marshal, Jinja's loader steps), and the small
targets (host-boot, the NIC scripts) render in less than that. So
:class:`~fabgen.targets.environment.ShippedLoader` also keeps one bundle per
environment and shipped directory (``bundle-`` then its key, beside the
entries): every shipped template's entry key, source SHA-256 and code, under
one HMAC, with the bundle's own key in its header. The first shipped template
an environment loads (eos's, in a full run) reads it, checks the MAC (marshal
only after), then reads every member's source through the loader and keeps
only members whose key (name, file path, autoescape, environment) and source
digest match what it just read; those become templates at once, and each later
``get_template`` of them is a dictionary lookup. So a member is exactly as
fresh as an entry read at that moment would be (Jinja itself, with
``auto_reload`` off, keeps a loaded template for the environment's life). A
template that is not a fresh member loads through its entry or compiles, and
the bundle is stored again with it once the render is done (one write, not one
per template). A bad bundle (MAC, truncation, another
bundle's file, a malformed member list) gets one ``fabgen: cache:`` line and is
ignored, then replaced; a user's overlay never reaches the bundle, since
:class:`~jinja2.ChoiceLoader` asks the overlay's loader first and an overlay
environment's fingerprint (its class) keys a bundle of its own.
"""

from __future__ import annotations

import hashlib
import hmac
import importlib.util
import marshal
import os
import stat
import sys
import time
import types
import weakref
from collections import ChainMap
from collections.abc import MutableMapping
from contextlib import suppress
from pathlib import Path
from typing import Any

import jinja2
from jinja2 import TemplateNotFound
from jinja2.bccache import Bucket, BytecodeCache
from jinja2.bccache import bc_version as jinja_bytecode_version
from jinja2.environment import Environment, Template
from jinja2.loaders import ChoiceLoader, FileSystemLoader
from jinja2.utils import _PassArg

from fabgen import user_cache

SCHEMA = 2
"""Bump when the entry layout or what goes into the key changes (2: a fixed binary header, no JSON)."""
MAGIC = b"fabgen-template-cache\n"
HEADER_BYTES = len(MAGIC) + 32 + 32
"""An entry: :data:`MAGIC`, the key's SHA-256 (the entry's name, raw), the source's SHA-256, the marshal
data, then the HMAC-SHA256 of all that."""
MAX_ENTRY_BYTES = 8 << 20
"""fabgen's largest compiled template is about 60 kB; a larger entry is not read."""
MAX_ENTRIES = 1024
MAX_TOTAL_BYTES = 64 << 20
"""Entries and bytes kept (one checkout's templates are about 30 entries, 1 MB), least recently used out."""
_MAC_BYTES = 32
BUNDLE_MAGIC = b"fabgen-template-bundle\n"
BUNDLE_HEADER_BYTES = len(BUNDLE_MAGIC) + 32
"""A bundle: :data:`BUNDLE_MAGIC`, the bundle's key (raw), the marshal data of its members, the HMAC-SHA256."""
MAX_BUNDLE_TEMPLATES = 256
"""fabgen ships 28 templates; a bundle listing more is not used."""
TOUCH_AFTER_SECONDS = 3600
"""A hit refreshes the entry's mtime (pruning drops the least recently used) only when it is older than
this: an hour is fine grain for an LRU of 1,024 entries, and most hits then write no inode."""


def _module_digest(module_name: str) -> str:
    """SHA-256 of a module's source file: fabgen's environment classes change codegen when their code does."""
    module = sys.modules.get(module_name)
    file = getattr(module, "__file__", None)
    if not file:
        return "no source"
    try:
        return hashlib.sha256(Path(file).read_bytes()).hexdigest()
    except OSError:
        return "unreadable"


def _callable_id(func: Any) -> str:
    if func is None:
        return "none"
    return f"{getattr(func, '__module__', '?')}.{getattr(func, '__qualname__', type(func).__qualname__)}" \
           f":{_PassArg.from_obj(func)}"


def environment_fingerprint(env: Environment) -> str:
    """Everything of ``env`` (and of Python and Jinja) that changes the code compiled from one source."""
    classes = {cls for kind in (type(env), env.template_class, env.code_generator_class, env.context_class)
               for cls in kind.__mro__}
    rows = [f"schema {SCHEMA}", f"jinja2 {jinja2.__version__} bc {jinja_bytecode_version}",
            f"python {importlib.util.MAGIC_NUMBER.hex()} marshal {marshal.version} {sys.implementation.cache_tag}"]
    for cls in sorted(classes, key=lambda c: f"{c.__module__}.{c.__qualname__}"):
        own = cls.__module__.split(".")[0] not in ("jinja2", "builtins", "typing")
        rows.append(f"class {cls.__module__}.{cls.__qualname__} {_module_digest(cls.__module__) if own else ''}")
    options = (env.block_start_string, env.block_end_string, env.variable_start_string, env.variable_end_string,
               env.comment_start_string, env.comment_end_string, env.line_statement_prefix,
               env.line_comment_prefix, env.trim_blocks, env.lstrip_blocks, env.newline_sequence,
               env.keep_trailing_newline, env.optimized, env.is_async, sorted(env.extensions),
               sorted(getattr(env, "intercepted_binops", ())), sorted(getattr(env, "intercepted_unops", ())),
               _callable_id(env.finalize), _callable_id(env.autoescape) if callable(env.autoescape) else env.autoescape)
    rows.append(f"options {options!r}")
    for kind, table in (("filter", env.filters), ("test", env.tests)):
        for name in sorted(table):
            passed = getattr(table[name], "jinja_pass_arg", None)  # _PassArg.from_obj: how Jinja calls it
            rows.append(f"{kind} {name} {'-' if passed is None else passed.name}")
    return hashlib.sha256("\n".join(rows).encode("utf-8", "surrogateescape")).hexdigest()


class _EnvironmentState:
    """What one environment's lookups share: the key's hashed prefix and the trusted store per cache location.

    Kept per environment, not per process: ``environment.cache_clear()`` (a new
    environment) starts from nothing, as a new ``fabgen generate`` process does,
    so nothing here lets a measurement skip work a new process would pay.
    """

    __slots__ = ("bundles", "prefix", "ready", "stores")

    def __init__(self, fingerprint: str) -> None:
        self.prefix = hashlib.sha256(f"{fingerprint}\0".encode())
        self.stores: dict[tuple[object, ...], tuple[str, bytes] | None] = {}
        self.bundles: dict[tuple[object, ...], _Bundle] = {}
        self.ready: dict[FileSystemLoader, dict[str, Template]] = {}
        """By loader (held, so never confused with a later one): the templates its first bundle admitted
        and no ``get_template`` took yet. Each was checked against its source, wherever the cache is now."""


_Member = tuple[str, str, bytes]
"""A bundle member: the template's entry key, its source's SHA-256 (both hex) and the marshal data of its code."""


class _Bundle:
    """One environment's bundle for one shipped directory: its members as verified, the templates not yet handed out."""

    __slots__ = ("key", "members", "ready", "store", "unstored")

    def __init__(self, key: str, store: tuple[str, bytes] | None) -> None:
        self.key = key
        self.store = store
        self.members: dict[str, _Member] = {}
        self.ready: dict[str, Template] = {}
        self.unstored = False
        """Members were added since the bundle was read or last stored (:meth:`TemplateCache.store_bundles`)."""


class TemplateCache(BytecodeCache):
    """Jinja's bytecode cache hook over :mod:`fabgen.user_cache`'s directory; see the module's docstring.

    A hit costs two small reads (the template's source, by the loader, and the
    entry), one HMAC over the entry, one comparison of the source digest and one
    ``marshal.loads``: the few-millisecond targets load two or three templates,
    so every step of the hit path counts against their floors.
    """

    def __init__(self, note: user_cache.Note = user_cache.note_once) -> None:
        self.note = note
        self._states: weakref.WeakKeyDictionary[Environment, _EnvironmentState] = weakref.WeakKeyDictionary()
        self._unstored: list[_Bundle] = []

    def _state(self, environment: Environment) -> _EnvironmentState:
        state = self._states.get(environment)
        if state is None:
            state = self._states[environment] = _EnvironmentState(environment_fingerprint(environment))
        return state

    def _store(self, state: _EnvironmentState | None = None) -> tuple[str, bytes] | None:
        """The entries directory and the secret, or None (cache off, or a directory this user cannot trust).

        Resolved once per environment and cache location (:func:`user_cache.location_key`: the
        variables that choose the directory, so a test that moves it is followed), then reused.
        """
        where = user_cache.location_key()
        if state is not None and where in state.stores:
            return state.stores[where]
        store: tuple[str, bytes] | None = None
        root = user_cache.active_cache_dir()
        if root is not None:
            secret = user_cache.user_secret(root)
            entries = root / f"templates-v{SCHEMA}"
            problem = secret if isinstance(secret, str) else user_cache.private_dir(entries)
            if problem is not None:
                self.note(f"not used: {problem}")
            elif not isinstance(secret, str):
                store = (str(entries), secret)
        if state is not None:
            state.stores[where] = store
        return store

    def get_source_checksum(self, source: str) -> str:
        return hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()

    @staticmethod
    def _key(state: _EnvironmentState, environment: Environment, name: str, filename: str | None) -> str:
        escape = environment.autoescape(name) if callable(environment.autoescape) else environment.autoescape
        key = state.prefix.copy()
        key.update(f"{name}\0{filename}\0{bool(escape)}".encode("utf-8", "surrogateescape"))
        return key.hexdigest()

    def get_bucket(self, environment: Environment, name: str, filename: str | None, source: str) -> Bucket:
        """A bucket named for this template in this environment; filled from disk only if every check passes."""
        state = self._state(environment)
        bucket = Bucket(environment, self._key(state, environment, name, filename), self.get_source_checksum(source))
        store = self._store(state)
        if store is not None:
            self._load(bucket, *store)
        return bucket

    def load_bytecode(self, bucket: Bucket) -> None:
        store = self._store(self._state(bucket.environment))
        if store is not None:
            self._load(bucket, *store)

    def _load(self, bucket: Bucket, entries: str, secret: bytes) -> None:
        path = f"{entries}/{bucket.key}"
        read = _read_entry(path)
        if read is None:
            return  # no entry: a plain miss, even if a concurrent writer's rename lands just after the failed open
        if isinstance(read, str):
            self.note(f"ignoring template entry {bucket.key[:16]}: {read}")
            return
        data, mtime = read
        code = self._verified(data, bucket, secret)
        if code is not None:
            bucket.code = code
            if mtime < time.time() - TOUCH_AFTER_SECONDS:
                with suppress(OSError):
                    os.utime(path)  # pruning drops the least recently used

    def _verified(self, data: bytes, bucket: Bucket, secret: bytes) -> types.CodeType | None:
        """The entry's code if its MAC, name and source digest check (marshal runs only after the MAC)."""
        body = _authenticated(data, MAGIC, bucket.key, secret, "entry", "it holds another template's code")
        if not isinstance(body, str) and len(body) < 32:
            body = "truncated or not a fabgen template entry"
        if isinstance(body, str):
            self.note(f"ignoring template entry {bucket.key[:16]}: {body}")
            return None
        if body[:32] != bytes.fromhex(bucket.checksum):
            return None  # the template was edited since: a plain miss, compiled and stored again
        try:
            code = marshal.loads(body[32:])
        except (ValueError, TypeError, EOFError) as exc:
            self.note(f"ignoring template entry {bucket.key[:16]}: {exc}")
            return None
        return code if isinstance(code, types.CodeType) else None

    def dump_bytecode(self, bucket: Bucket) -> None:
        store = self._store(self._state(bucket.environment))
        if store is None or bucket.code is None:
            return
        entries, secret = store
        body = MAGIC + bytes.fromhex(bucket.key) + bytes.fromhex(bucket.checksum) + marshal.dumps(bucket.code)
        path = Path(entries) / bucket.key
        problem = user_cache.atomic_write(path, body, hmac.digest(secret, body, "sha256"))
        if problem:
            self.note(f"template not stored: {problem}")
            return
        user_cache.prune(path.parent, keep=path.name, max_entries=MAX_ENTRIES, max_bytes=MAX_TOTAL_BYTES)

    def preloaded(self, environment: Environment, loader: FileSystemLoader, name: str,
                  globals: MutableMapping[str, Any] | None) -> Template | None:
        """``name`` from the bundle (see the module docstring), once, if it was a fresh member; else None.

        Only for the globals Jinja passes a plain ``get_template`` (``environment.make_globals(None)``): the
        bundle's templates were made with those.
        """
        state = self._state(environment)
        ready = state.ready.get(loader)
        if ready is None:
            ready = state.ready[loader] = self._bundle(environment, loader).ready
        if not ready or not (isinstance(globals, ChainMap) and len(globals.maps) == 2 and not globals.maps[0]
                             and globals.maps[1] is environment.globals):
            return None
        return ready.pop(name, None)

    def remember(self, environment: Environment, loader: FileSystemLoader, name: str, bucket: Bucket) -> None:
        """``name`` was loaded outside the bundle (its entry, or compiled): make it a member, stored later.

        Stored by :meth:`store_bundles` once the render is done, not here: a cold
        cache loads every template outside the bundle, and writing the growing
        bundle once per template wrote it 28 times.
        """
        bundle = self._bundle(environment, loader)
        if bundle.store is None or bucket.code is None:
            return
        known = bundle.members.get(name)
        if known is not None and known[:2] == (bucket.key, bucket.checksum):
            return  # already a member (Jinja's in-memory cache dropped the template): nothing to store
        bundle.members[name] = (bucket.key, bucket.checksum, marshal.dumps(bucket.code))
        if not bundle.unstored:
            bundle.unstored = True
            self._unstored.append(bundle)

    def store_bundles(self) -> None:
        """Write every bundle that gained members (:meth:`remember`) since it was read or last stored."""
        pending, self._unstored = self._unstored, []
        for bundle in pending:
            bundle.unstored = False
            if bundle.store is None:
                continue
            entries, secret = bundle.store
            body = (BUNDLE_MAGIC + bytes.fromhex(bundle.key)
                    + marshal.dumps(tuple((member, *bundle.members[member]) for member in sorted(bundle.members))))
            problem = user_cache.atomic_write(Path(entries) / f"bundle-{bundle.key}", body,
                                              hmac.digest(secret, body, "sha256"))
            if problem:
                self.note(f"template bundle not stored: {problem}")

    def _bundle(self, environment: Environment, loader: FileSystemLoader) -> _Bundle:
        """This environment's bundle for ``loader``'s directory, read and verified at its first use."""
        state = self._state(environment)
        where = (user_cache.location_key(), tuple(loader.searchpath))
        bundle = state.bundles.get(where)
        if bundle is not None:
            return bundle
        key = state.prefix.copy()
        key.update("bundle\0{}".format("\0".join(loader.searchpath)).encode("utf-8", "surrogateescape"))
        store = self._store(state)
        bundle = state.bundles[where] = _Bundle(key.hexdigest(), store)
        if store is not None:
            for name, member in self._bundle_members(bundle, *store):
                self._admit(state, environment, loader, bundle, name, member)
            _hand_to_jinja(environment, loader, bundle.ready)
        return bundle

    def _admit(self, state: _EnvironmentState, environment: Environment, loader: FileSystemLoader, bundle: _Bundle,
               name: str, member: _Member) -> None:
        """Make ``name``'s template from its member if the member is for the source the loader reads now."""
        try:
            source, filename, uptodate = loader.get_source(environment, name)
        except TemplateNotFound:
            return
        if member[0] != self._key(state, environment, name, filename) or member[1] != self.get_source_checksum(source):
            return  # moved, or edited since: loads as any other template does, and is stored again
        try:
            code = marshal.loads(member[2])
        except (ValueError, TypeError, EOFError) as exc:
            self.note(f"ignoring template bundle {bundle.key[:16]}: {name}: {exc}")
            return
        if isinstance(code, types.CodeType):
            bundle.members[name] = member
            bundle.ready[name] = environment.template_class.from_code(
                environment, code, environment.make_globals(None), uptodate)

    def _bundle_members(self, bundle: _Bundle, entries: str, secret: bytes) -> list[tuple[str, _Member]]:
        """The bundle's ``(name, member)`` list if its MAC, name and layout check; none (and a note) if not."""
        path = f"{entries}/bundle-{bundle.key}"
        read = _read_entry(path)
        if read is None:
            return []
        members = read if isinstance(read, str) else _bundle_rows(read[0], bundle.key, secret)
        if isinstance(members, str):
            self.note(f"ignoring template bundle {bundle.key[:16]}: {members}")
            return []
        if not isinstance(read, str) and read[1] < time.time() - TOUCH_AFTER_SECONDS:
            with suppress(OSError):
                os.utime(path)  # pruning drops the least recently used
        return members

    def clear(self) -> None:
        """Remove every entry (``BytecodeCache``'s interface; fabgen itself never calls it)."""
        store = self._store()
        if store is not None:
            for child in Path(store[0]).iterdir():
                with suppress(OSError):
                    child.unlink()


def _hand_to_jinja(environment: Environment, loader: FileSystemLoader, ready: dict[str, Template]) -> None:
    """Put the admitted templates in Jinja's own cache, as if each had been loaded: a later ``get_template`` of one
    is Jinja's dictionary hit, not its miss path (the loader chain, :meth:`preloaded`, a globals map, a cache
    insert), 10-40 us each on a small target's first render.

    Only when ``loader`` is the environment's only loader: behind a user's overlay, the overlay must be asked first.
    The key is the one Jinja's ``_load_template`` uses; were it to change, these would be unused entries and the
    templates would still come from :meth:`preloaded`, which keeps them too.
    """
    chain = environment.loader
    if environment.cache is None or not (chain is loader or (isinstance(chain, ChoiceLoader)
                                                              and chain.loaders == [loader])):
        return
    key = weakref.ref(chain)
    for name, template in ready.items():
        environment.cache[(key, name)] = template


def _bundle_rows(data: bytes, key: str, secret: bytes) -> list[tuple[str, _Member]] | str:
    """A bundle's members, or why it is not used: ``marshal`` runs only once the MAC and the bundle's key check."""
    body = _authenticated(data, BUNDLE_MAGIC, key, secret, "bundle", "it is another environment's bundle")
    if isinstance(body, str):
        return body
    try:
        members = marshal.loads(body)
    except (ValueError, TypeError, EOFError) as exc:
        return str(exc)
    if not _well_formed(members):
        return "not a list of templates"
    return [(row[0], (row[1], row[2], row[3])) for row in members]


def _authenticated(data: bytes, magic: bytes, key: str, secret: bytes, kind: str, elsewhere: str) -> memoryview | str:
    """What follows ``magic`` and the raw ``key`` up to the MAC, once the MAC and then the key check; else why not.

    An entry and a bundle are laid out alike (magic, key, payload, HMAC-SHA256 of
    all before it), so both are authenticated here, in this order: nothing of the
    payload is looked at before the MAC checks, and ``elsewhere`` says what a
    genuine file under the wrong name is (two entries' files swapped).
    """
    header = len(magic) + 32
    if len(data) < header + _MAC_BYTES or not data.startswith(magic):
        return f"truncated or not a fabgen template {kind}"
    view = memoryview(data)
    if not hmac.compare_digest(view[-_MAC_BYTES:], hmac.digest(secret, view[:-_MAC_BYTES], "sha256")):
        return "authentication failed (tampered, truncated, or written under another secret)"
    if view[len(magic):header] != bytes.fromhex(key):
        return elsewhere
    return view[header:-_MAC_BYTES]


def _well_formed(members: object) -> bool:
    """A tuple of at most :data:`MAX_BUNDLE_TEMPLATES` ``(name, key, digest, code)`` rows of the right types."""
    return (isinstance(members, tuple) and len(members) <= MAX_BUNDLE_TEMPLATES
            and all(isinstance(row, tuple) and len(row) == 4 and isinstance(row[0], str) and isinstance(row[1], str)
                    and isinstance(row[2], str) and isinstance(row[3], bytes) for row in members))


_ENTRY_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def _read_entry(path: str) -> tuple[bytes, float] | str | None:
    """``(bytes, mtime)`` of the entry, None if there is none, or why it is not read.

    :func:`fabgen.bounded.read_bytes`'s rules (a regular file, not a link, within
    :data:`MAX_ENTRY_BYTES`, the bound kept while reading) in one ``open``, ``fstat``
    and ``read``; the ``fstat`` also gives the mtime that decides whether to touch it.
    """
    try:
        fd = os.open(path, _ENTRY_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if os.path.islink(path):
            return "is a symbolic link; not followed (a template cache entry must be a regular file)"
        return f"cannot read: {exc.strerror or exc}"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return "not a regular file"
        if info.st_size > MAX_ENTRY_BYTES:
            return f"{info.st_size} bytes, larger than the {MAX_ENTRY_BYTES}-byte limit"
        chunks = []
        total = 0
        while total <= MAX_ENTRY_BYTES:
            chunk = os.read(fd, max(info.st_size + 1 - total, 1))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > MAX_ENTRY_BYTES:
            return f"grew past the {MAX_ENTRY_BYTES}-byte limit while being read"
        return (chunks[0] if len(chunks) == 1 else b"".join(chunks)), info.st_mtime
    except OSError as exc:
        return f"cannot read: {exc.strerror or exc}"
    finally:
        os.close(fd)


template_cache = TemplateCache()
"""The one instance fabgen's environments share (it resolves the directory per use, so tests may move it)."""
