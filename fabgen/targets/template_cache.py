"""Compiled Jinja templates kept on disk, authenticated, so a process renders without compiling.

Why: compiling fabgen's 28 templates (lex, parse, code generation, Python's
``compile``) costs about 80 ms of CPU per process, more than rendering a small
target's files (nccl-topo, host-boot, the NIC scripts), and every ``fabgen
generate`` paid it again. Jinja's :class:`~jinja2.BytecodeCache` hook stores the
compiled module code; this one stores it in :mod:`fabgen.user_cache`'s
directory (``templates-v1/``), under its rules (0700 directory, 0600 per-user
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
"""

from __future__ import annotations

import hashlib
import hmac
import importlib.util
import json
import marshal
import os
import sys
import types
import weakref
from contextlib import suppress
from pathlib import Path
from typing import Any

import jinja2
from jinja2.bccache import Bucket, BytecodeCache
from jinja2.bccache import bc_version as jinja_bytecode_version
from jinja2.environment import Environment
from jinja2.utils import _PassArg

from fabgen import user_cache
from fabgen.bounded import read_bytes
from fabgen.errors import FabgenError

SCHEMA = 1
"""Bump when the entry layout or what goes into the key changes."""
MAGIC = b"fabgen-template-cache\n"
MAX_ENTRY_BYTES = 8 << 20
"""fabgen's largest compiled template is about 60 kB; a larger entry is not read."""
MAX_ENTRIES = 1024
MAX_TOTAL_BYTES = 64 << 20
"""Entries and bytes kept (one checkout's templates are about 30 entries, 1 MB), least recently used out."""
_MAC_BYTES = 32


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
        rows.extend(f"{kind} {name} {_PassArg.from_obj(func)}" for name, func in sorted(table.items()))
    return hashlib.sha256("\n".join(rows).encode("utf-8", "surrogateescape")).hexdigest()


class TemplateCache(BytecodeCache):
    """Jinja's bytecode cache hook over :mod:`fabgen.user_cache`'s directory; see the module's docstring."""

    def __init__(self, note: user_cache.Note = user_cache.note_once) -> None:
        self.note = note
        self._fingerprints: weakref.WeakKeyDictionary[Environment, str] = weakref.WeakKeyDictionary()
        self._trusted: dict[Path, tuple[Path, bytes] | None] = {}

    def _store(self) -> tuple[Path, bytes] | None:
        """The entries directory and the secret, or None (cache off, or a directory this user cannot trust)."""
        root = user_cache.active_cache_dir()
        if root is None:
            return None
        if root not in self._trusted:
            secret = user_cache.user_secret(root)
            entries = root / f"templates-v{SCHEMA}"
            problem = secret if isinstance(secret, str) else user_cache.private_dir(entries)
            if problem is not None:
                self.note(f"not used: {problem}")
            self._trusted[root] = None if problem is not None or isinstance(secret, str) else (entries, secret)
        return self._trusted[root]

    def get_source_checksum(self, source: str) -> str:
        return hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()

    def get_bucket(self, environment: Environment, name: str, filename: str | None, source: str) -> Bucket:
        """A bucket named for this template in this environment; filled from disk only if every check passes."""
        fingerprint = self._fingerprints.get(environment)
        if fingerprint is None:
            fingerprint = self._fingerprints[environment] = environment_fingerprint(environment)
        escape = environment.autoescape(name) if callable(environment.autoescape) else environment.autoescape
        key = hashlib.sha256(f"{fingerprint}\0{name}\0{filename}\0{bool(escape)}".encode(
            "utf-8", "surrogateescape")).hexdigest()
        bucket = Bucket(environment, key, self.get_source_checksum(source))
        self.load_bytecode(bucket)
        return bucket

    def load_bytecode(self, bucket: Bucket) -> None:
        store = self._store()
        if store is None:
            return
        entries, secret = store
        path = entries / bucket.key
        try:
            data = read_bytes(path, MAX_ENTRY_BYTES, what="template cache entry", follow=False)
        except FabgenError as exc:
            # No entry is a plain miss, even if a concurrent writer's rename lands just after the failed open
            # (an existence test after the read said "ignoring ...: no such file" for it).
            if not isinstance(exc.__context__, FileNotFoundError):
                self.note(f"ignoring template entry {bucket.key[:16]}: {exc.problems[0].message}")
            return
        code = self._verified(data, bucket, secret)
        if code is not None:
            bucket.code = code
            with suppress(OSError):
                os.utime(path)  # pruning drops the least recently used

    def _verified(self, data: bytes, bucket: Bucket, secret: bytes) -> types.CodeType | None:
        """The entry's code if its MAC, name and source digest check (marshal runs only after the MAC)."""
        size = len(MAGIC) + 4
        if len(data) < size + _MAC_BYTES or not data.startswith(MAGIC):
            self.note(f"ignoring template entry {bucket.key[:16]}: truncated or not a fabgen template entry")
            return None
        body, mac = data[:-_MAC_BYTES], data[-_MAC_BYTES:]
        if not hmac.compare_digest(mac, hmac.new(secret, body, hashlib.sha256).digest()):
            self.note(f"ignoring template entry {bucket.key[:16]}: authentication failed "
                      "(tampered, truncated, or written under another secret)")
            return None
        length = int.from_bytes(body[len(MAGIC):size], "big")
        try:
            header = json.loads(body[size:size + length])
            if header["key"] != bucket.key:
                self.note(f"ignoring template entry {bucket.key[:16]}: it holds another template's code")
                return None
            if header["source"] != bucket.checksum:
                return None  # the template was edited since: a plain miss, compiled and stored again
            code = marshal.loads(body[size + length:])
        except (ValueError, KeyError, TypeError, EOFError) as exc:
            self.note(f"ignoring template entry {bucket.key[:16]}: {exc}")
            return None
        return code if isinstance(code, types.CodeType) else None

    def dump_bytecode(self, bucket: Bucket) -> None:
        store = self._store()
        if store is None or bucket.code is None:
            return
        entries, secret = store
        header = json.dumps({"key": bucket.key, "source": bucket.checksum}, sort_keys=True).encode()
        body = MAGIC + len(header).to_bytes(4, "big") + header + marshal.dumps(bucket.code)
        path = entries / bucket.key
        problem = user_cache.atomic_write(path, body, hmac.new(secret, body, hashlib.sha256).digest())
        if problem:
            self.note(f"template not stored: {problem}")
            return
        user_cache.prune(entries, keep=path.name, max_entries=MAX_ENTRIES, max_bytes=MAX_TOTAL_BYTES)

    def clear(self) -> None:
        """Remove every entry (``BytecodeCache``'s interface; fabgen itself never calls it)."""
        store = self._store()
        if store is not None:
            for child in store[0].iterdir():
                with suppress(OSError):
                    child.unlink()


template_cache = TemplateCache()
"""The one instance fabgen's environments share (it resolves the directory per use, so tests may move it)."""
