"""Time, size and loop limits for users' templates (``--templates DIR``).

Jinja2's sandbox stops a template from reaching Python internals, but not from
running forever or filling memory: ``{% for i in range(99999) %}{% for j in
range(99999) %}x{% endfor %}{% endfor %}`` is allowed, and so is ``'x' * 10**10``.
:class:`LimitedSandbox` adds budgets, per rendered file:

* **time**: :data:`MAX_SECONDS` of wall time, checked at every loop step,
  call, attribute and item access, operator and printed value;
* **loop steps**: :data:`MAX_LOOP_STEPS` iterations over all loops (every
  ``for`` iterable is wrapped, so even a loop with an empty body counts);
* **size**: no string, list or power built by an operator above
  :data:`MAX_VALUE_BYTES`, and no concatenated output (a file, a macro's or a
  block's body) above :data:`MAX_OUTPUT_BYTES`, checked *before* joining;
* **source**: a template file above :data:`~fabgen.bounded.MAX_TEMPLATE_BYTES`,
  or one that is not a regular file (a FIFO would block the loader), is refused.

After one render passes a limit, the environment refuses every further render
at once (a runaway template would otherwise cost its limit once per device).
Passing a limit raises :class:`TemplateLimitError`, a sandbox
:class:`~jinja2.sandbox.SecurityError`, so the renderer reports it as any other
template error: exit 2, naming the template and line, nothing written.
fabgen's own templates do not run here (see :mod:`fabgen.targets.environment`).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final

from jinja2 import nodes
from jinja2.environment import Template
from jinja2.exceptions import SecurityError, TemplateNotFound
from jinja2.loaders import FileSystemLoader, split_template_path
from jinja2.sandbox import SandboxedEnvironment

from fabgen.bounded import MAX_TEMPLATE_BYTES, read_text
from fabgen.errors import FabgenError

__all__ = [
    "MAX_LOOP_STEPS",
    "MAX_OUTPUT_BYTES",
    "MAX_SECONDS",
    "MAX_VALUE_BYTES",
    "BoundedFileSystemLoader",
    "LimitedSandbox",
    "TemplateLimitError",
]

MAX_SECONDS: Final = 10.0
"""Wall time one file's render may take (fabgen's largest, a 576-port EOS spine, takes ~5 ms)."""
MAX_LOOP_STEPS: Final = 1_000_000
"""Loop iterations one file's render may make, all loops together."""
MAX_OUTPUT_BYTES: Final = 16 * 1024 * 1024
"""Characters one concatenation (the file, a macro's or block's body) may produce (fabgen's largest file: ~0.3 MB)."""
MAX_VALUE_BYTES: Final = 1024 * 1024
"""Largest string, list or number (in digits) an operator (``*``, ``**``, ``+``) may build."""


class TemplateLimitError(SecurityError):
    """A user's template went past a limit of this module."""


class _Budget(threading.local):
    deadline: float | None = None
    steps: int = 0


_budget = _Budget()


def _tick() -> None:
    deadline = _budget.deadline
    if deadline is not None and time.monotonic() > deadline:
        raise TemplateLimitError(f"the template ran longer than {MAX_SECONDS:g} s; refusing it")


def _size(value: object) -> int:
    if isinstance(value, str | bytes | list | tuple):
        return len(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return (value.bit_length() + 3) // 4  # about its hex digits: enough to bound memory
    return 0


class _LimitedTemplate(Template):
    """Each top-level render gets a fresh budget (includes and imports share their includer's)."""

    def render(self, *args: Any, **kwargs: Any) -> str:
        if _budget.deadline is not None:  # nested (a template rendering a template): the outer budget holds
            return super().render(*args, **kwargs)
        tripped = getattr(self.environment, "fabgen_tripped", None)
        if tripped:  # one runaway template must not cost its limit once per device of a 2,000-switch fabric
            raise TemplateLimitError(f"{self.name}: not rendered, an earlier render went past a limit ({tripped})")
        _budget.deadline = time.monotonic() + MAX_SECONDS
        _budget.steps = 0
        try:
            return super().render(*args, **kwargs)
        except TemplateLimitError as exc:
            self.environment.fabgen_tripped = str(exc)  # type: ignore[attr-defined]
            raise
        finally:
            _budget.deadline = None


class LimitedSandbox(SandboxedEnvironment):
    """Jinja2's sandbox with the budgets of this module."""

    template_class = _LimitedTemplate
    intercepted_binops = frozenset({"*", "**", "+"})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fabgen_loop = _loop  # read by the compiled code as environment.fabgen_loop: no template can rebind it
        self.finalize = _finalize

    # every loop's iterable goes through fabgen_loop, counted and timed
    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        tree = super()._parse(source, name, filename)
        for loop in tree.find_all(nodes.For):
            loop.iter = nodes.Call(nodes.EnvironmentAttribute("fabgen_loop", lineno=loop.lineno), [loop.iter], [],
                                   None, None, lineno=loop.lineno)
        return tree

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        _tick()
        if operator == "**":
            if isinstance(right, int) and isinstance(left, int) and abs(left) > 1 and \
                    right * max(abs(left).bit_length(), 1) > 8 * MAX_VALUE_BYTES:
                raise TemplateLimitError(f"{operator}: the result would exceed {MAX_VALUE_BYTES} bytes")
        elif operator == "*":
            for seq, count in ((left, right), (right, left)):
                if isinstance(count, int) and _size(seq) * max(count, 0) > MAX_VALUE_BYTES and \
                        isinstance(seq, str | bytes | list | tuple):
                    raise TemplateLimitError(f"*: the result would exceed {MAX_VALUE_BYTES} characters")
        elif operator == "+" and _size(left) + _size(right) > MAX_VALUE_BYTES and \
                isinstance(left, str | bytes | list | tuple):
            raise TemplateLimitError(f"+: the result would exceed {MAX_VALUE_BYTES} characters")
        return super().call_binop(context, operator, left, right)

    def call(self, context: Any, obj: Any, /, *args: Any, **kwargs: Any) -> Any:
        _tick()
        return super().call(context, obj, *args, **kwargs)

    def getattr(self, obj: Any, attribute: str) -> Any:
        _tick()
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        _tick()
        return super().getitem(obj, argument)

    @staticmethod
    def concat(parts: Iterable[str]) -> str:
        """``"".join`` that counts first: a macro looping a million times must not build gigabytes."""
        chunks = list(parts)
        if sum(map(len, chunks)) > MAX_OUTPUT_BYTES:
            raise TemplateLimitError(f"the template's output exceeds {MAX_OUTPUT_BYTES} characters")
        return "".join(chunks)


def _loop(iterable: Iterable[Any]) -> Iterator[Any]:
    for item in iterable:
        _budget.steps += 1
        if _budget.steps > MAX_LOOP_STEPS:
            raise TemplateLimitError(f"the template's loops ran more than {MAX_LOOP_STEPS} steps; refusing it")
        if not _budget.steps & 0xFF:
            _tick()
        yield item


def _finalize(value: Any) -> Any:
    _tick()
    if isinstance(value, str) and len(value) > MAX_OUTPUT_BYTES:
        raise TemplateLimitError(f"a printed value exceeds {MAX_OUTPUT_BYTES} characters")
    return value


def unchanged_since(path: str, mtime: float) -> Callable[[], bool]:
    """A loader's ``uptodate``: the file still has the mtime it had when its source was read."""

    def uptodate() -> bool:
        try:
            return os.path.getmtime(path) == mtime
        except OSError:
            return False

    return uptodate


class BoundedFileSystemLoader(FileSystemLoader):
    """A :class:`~jinja2.FileSystemLoader` that reads only regular files of at most ``MAX_TEMPLATE_BYTES``.

    A FIFO named like a template would block Jinja's loader forever; a huge
    file would be read whole. Both are a template error instead.
    """

    def get_source(self, environment: Any, template: str) -> tuple[str, str, Callable[[], bool]]:
        pieces = split_template_path(template)
        for searchpath in self.searchpath:
            path = os.path.join(searchpath, *pieces)
            if not os.path.lexists(path):
                continue
            try:
                source = read_text(path, MAX_TEMPLATE_BYTES, what="template")
            except FabgenError as exc:
                raise TemplateLimitError(f"{path}: {exc.problems[0].message}") from None
            return source, os.path.normpath(path), unchanged_since(path, os.path.getmtime(path))
        raise TemplateNotFound(template)
