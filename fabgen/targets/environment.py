"""The one Jinja2 environment every template renders in.

``StrictUndefined`` (a typo is an error, not an empty string), autoescaping for
XML, no access to Python internals. With a user overlay (``--templates DIR``)
that is Jinja2's full ``SandboxedEnvironment``: someone else's template is
untrusted code. fabgen's own reviewed templates run in :class:`GuardedEnvironment`,
which refuses the same underscore names at a fraction of the sandbox's
per-attribute cost (half of an EOS leaf's render time went to the sandbox).
Built once per template directory and reused: compiling is the expensive part,
so the compiled code is also kept on disk between processes
(:mod:`fabgen.targets.template_cache`, authenticated and checked on every use).
"""

from __future__ import annotations

import os
import posixpath
import shlex
import stat
from collections import ChainMap
from collections.abc import Callable, Mapping, MutableMapping
from functools import lru_cache
from pathlib import Path
from types import CodeType
from typing import TYPE_CHECKING, Any

from jinja2 import (
    ChoiceLoader,
    Environment,
    FileSystemLoader,
    StrictUndefined,
    Template,
    TemplateNotFound,
    select_autoescape,
)
from jinja2.loaders import split_template_path
from jinja2.runtime import Context
from markupsafe import escape

try:
    from markupsafe import _escape_inner  # type: ignore[attr-defined]
except ImportError:  # MarkupSafe 2: escape is all C, nothing to save
    _escape_inner = escape

from fabgen._resources import resource_dir
from fabgen.targets.hostnet.escape import comment_text, keyfile_value, yaml_str
from fabgen.targets.template_cache import TemplateCache, template_cache
from fabgen.template_limits import BoundedFileSystemLoader, LimitedSandbox, unchanged_since

if TYPE_CHECKING:
    from fabgen.targets.base import RenderContext

HOST_NET_FILTERS = {"yaml_str": yaml_str, "keyfile_value": keyfile_value, "comment_text": comment_text}


def shell_quote(value: object) -> str:
    """Quote one value as a single bash word.

    Only strings and integers: ``None`` or a bool reaching a script means the
    template printed something the plan did not decide, which must fail the
    render rather than print ``'None'``.
    """
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise TypeError(f"shell_quote: refusing {type(value).__name__} value {value!r}")
    return shlex.quote(str(value))


def print_escaped(value: object) -> str:
    """What an autoescaped ``{{ value }}`` prints: MarkupSafe's ``escape``, the same characters, as a plain string.

    Why: MarkupSafe 3's ``escape`` is Python around its C escaper, and wraps the
    result in a ``Markup`` (a Python ``__new__`` with a ``hasattr`` and a
    ``super()`` call): 40% of nccl-topo's render. A printed value goes straight
    into the output, joined with the rest or into a block's buffer that Jinja
    marks safe as a whole, so nothing looks at its type. A ``str`` or an ``int``
    (which has no ``__html__`` and prints no character that needs escaping) is
    escaped here; any other value, ``Markup`` included, goes to ``escape``.
    """
    if type(value) is str:
        escaped: str = _escape_inner(value)
        return escaped
    if type(value) is int:
        return str(value)
    return escape(value)


class GuardedTemplate(Template):
    """Jinja's :class:`~jinja2.Template`, with the globals merged into a render's context by plain dict updates.

    Why: Jinja copies ``self.globals``, a :class:`~collections.ChainMap` over the
    environment's globals, with ``dict(globals, **vars)``, which walks the
    ChainMap in Python (its ``__iter__`` and a ``__getitem__`` per name): half
    of the fixed cost of a small render, paid by every file of every target.
    Merging the layers with ``dict.update``, last layer first, gives the same
    names in the same order with the same values (the first layer holding a
    name wins); any other case (shared, locals, a layer that is not a plain
    dict) is Jinja's own code. The context's ``globals_keys`` come from the
    merged dict, the same names, rather than from walking the ChainMap again
    (``set(ChainMap)`` runs Python code: a fifth of a small file's first render).
    Autoescaped output prints through :func:`print_escaped`.
    """

    @classmethod
    def from_code(cls, environment: Environment, code: CodeType, globals: MutableMapping[str, Any],
                  uptodate: Callable[[], bool] | None = None) -> Template:
        """Jinja's, then the template module's ``escape`` (only ever called on a value being printed, by the
        code Jinja generates for ``{{ }}`` when autoescaping) is :func:`print_escaped`."""
        template = super().from_code(environment, code, globals, uptodate)
        namespace = template.root_render_func.__globals__
        if namespace.get("escape") is escape:
            namespace["escape"] = print_escaped
        return template

    def new_context(self, vars: dict[str, Any] | None = None, shared: bool = False,
                    locals: Mapping[str, Any] | None = None) -> Context:
        layers = self.globals
        if shared or locals or type(layers) is not ChainMap:
            return super().new_context(vars, shared, locals)
        merged: dict[str, Any] = {}
        for layer in reversed(layers.maps):  # one pass tests and merges: a generator for the test cost as much
            if type(layer) is not dict:
                return super().new_context(vars, shared, locals)
            merged.update(layer)
        parent = dict(merged, **vars) if vars else merged
        return self.environment.context_class(self.environment, parent, self.name, self.blocks, globals=merged)


class GuardedEnvironment(Environment):
    """Attribute and item access never reaches a name starting with ``_`` (``__class__``, ``__globals__``...)."""

    template_class = GuardedTemplate

    def getattr(self, obj: Any, attribute: str) -> Any:
        """Jinja2's ``Environment.getattr`` inlined (no ``super()`` frame): every ``x.y`` of every template
        comes here, millions of times for a large fabric."""
        if attribute[:1] == "_":
            return self.undefined(obj=obj, name=attribute)
        try:
            return getattr(obj, attribute)
        except AttributeError:
            pass
        try:
            return obj[attribute]
        except (TypeError, LookupError, AttributeError):
            return self.undefined(obj=obj, name=attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        if isinstance(argument, str) and argument.startswith("_"):
            return self.undefined(obj=obj, name=argument)
        return super().getitem(obj, argument)


_SOURCE_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


class ShippedLoader(FileSystemLoader):
    """Jinja's :class:`FileSystemLoader` for fabgen's own templates, reading a source in one open, fstat and read.

    Why: a template cache hit still reads the source (its digest proves the
    entry is not stale), and Jinja's loader spends a ``stat`` to test the file,
    a text-mode ``open`` and a second ``stat`` for the mtime on it: about a
    third of a small template's load. Same answers: a missing name, or one that
    is not a regular file, is looked for further and then ``TemplateNotFound``;
    the text is decoded as Jinja's text-mode read does (universal newlines);
    ``uptodate`` compares the mtime read with the file.
    """

    def get_source(self, environment: Environment, template: str) -> tuple[str, str, Callable[[], bool]]:
        pieces = split_template_path(template)
        for searchpath in self.searchpath:
            filename = posixpath.join(searchpath, *pieces)
            try:
                fd = os.open(filename, _SOURCE_FLAGS)
            except OSError:
                continue
            try:
                info = os.fstat(fd)
                if not stat.S_ISREG(info.st_mode):
                    continue
                chunks = []
                while chunk := os.read(fd, max(info.st_size + 1, 4096)):
                    chunks.append(chunk)
            finally:
                os.close(fd)
            contents = b"".join(chunks).decode(self.encoding)
            if "\r" in contents:
                contents = contents.replace("\r\n", "\n").replace("\r", "\n")
            return contents, os.path.normpath(filename), unchanged_since(filename, info.st_mtime)
        raise TemplateNotFound(template)

    def load(self, environment: Environment, name: str, globals: MutableMapping[str, Any] | None = None) -> Template:
        """Jinja's ``BaseLoader.load`` steps, with the shipped templates' bundle in front (:mod:`template_cache`).

        A template the bundle holds fresh comes from it; any other is read, found in its entry or compiled as
        Jinja would, and then put in the bundle, so the next process gets it from there.
        """
        cache = environment.bytecode_cache
        if not isinstance(cache, TemplateCache):
            return super().load(environment, name, globals)
        template = cache.preloaded(environment, self, name, globals)
        if template is not None:
            return template
        source, filename, uptodate = self.get_source(environment, name)
        bucket = cache.get_bucket(environment, name, filename, source)
        if bucket.code is None:
            bucket.code = environment.compile(source, name, filename)
            cache.set_bucket(bucket)
        cache.remember(environment, self, name, bucket)
        return environment.template_class.from_code(environment, bucket.code, {} if globals is None else globals,
                                                    uptodate)


@lru_cache(maxsize=8)
def environment(user_templates: Path | None = None) -> Environment:
    """The shared environment; ``user_templates`` overlays the shipped templates file by file (sandboxed)."""
    # a user's overlay: sandboxed, with time, loop and size budgets, read only from regular files
    loaders: list[FileSystemLoader] = [BoundedFileSystemLoader(str(user_templates))] if user_templates else []
    loaders.append(ShippedLoader(str(resource_dir("templates"))))
    kind = LimitedSandbox if user_templates else GuardedEnvironment
    env = kind(
        loader=ChoiceLoader(loaders),
        undefined=StrictUndefined,
        autoescape=select_autoescape(enabled_extensions=("xml", "xml.j2"), default_for_string=False, default=False),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,
        cache_size=-1,  # a plain dict: Jinja's LRU locks and walks a deque on every hit (eos asks once per switch)
        bytecode_cache=template_cache,
    )
    env.filters["shell_quote"] = shell_quote
    env.filters.update(HOST_NET_FILTERS)
    return env


def shipped_template(env: Environment, name: str) -> bool:
    """``name`` resolves to fabgen's own file, not a user's overlay: a shipped template is reviewed to print
    values as they are, which lets a target render one shape for many devices and fill the values in."""
    return Path(env.get_template(name).filename or "").resolve() == resource_dir("templates").resolve() / name


def shipped_templates(context: RenderContext, names: tuple[str, ...]) -> bool:
    """Every one of ``names`` is fabgen's own (:func:`shipped_template`), asked once per render."""
    key = "shipped:" + ",".join(names)
    verdict: bool | None = context.cache.get(key)
    if verdict is None:
        verdict = context.cache[key] = all(shipped_template(context.env, name) for name in names)
    return verdict
