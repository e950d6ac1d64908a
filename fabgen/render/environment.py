"""The one Jinja2 environment every template renders in.

Sandboxed (a user's overlay template cannot reach Python internals),
``StrictUndefined`` (a typo is an error, not an empty string), autoescaping for
XML. Built once per template directory and reused: compiling templates is the
expensive part of rendering.
"""

from __future__ import annotations

import shlex
from functools import lru_cache
from pathlib import Path

from jinja2 import ChoiceLoader, FileSystemLoader, StrictUndefined, select_autoescape
from jinja2.sandbox import SandboxedEnvironment

from fabgen._resources import resource_dir


def shell_quote(value: object) -> str:
    """Quote one value as a single bash word.

    Only strings and integers: ``None`` or a bool reaching a script means the
    template printed something the plan did not decide, which must fail the
    render rather than print ``'None'``.
    """
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise TypeError(f"shell_quote: refusing {type(value).__name__} value {value!r}")
    return shlex.quote(str(value))


@lru_cache(maxsize=8)
def environment(user_templates: Path | None = None) -> SandboxedEnvironment:
    """The shared environment; ``user_templates`` overlays the shipped templates file by file."""
    loaders = [FileSystemLoader(str(user_templates))] if user_templates else []
    loaders.append(FileSystemLoader(str(resource_dir("templates"))))
    env = SandboxedEnvironment(
        loader=ChoiceLoader(loaders),
        undefined=StrictUndefined,
        autoescape=select_autoescape(enabled_extensions=("xml", "xml.j2"), default_for_string=False, default=False),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,
    )
    env.filters["shell_quote"] = shell_quote
    return env
