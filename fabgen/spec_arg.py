"""The spec argument of every command, resolved before anything heavy is imported.

A leaf module (no ruamel, pydantic or Jinja2): the ``--device`` cache-hit path
parses its arguments with it.
"""

from __future__ import annotations

from pathlib import Path


def spec_path(value: str) -> str:
    """A command line's spec argument: a directory holding ``spec.yaml`` names that file.

    Every example is a directory with its spec in it, so ``fabgen generate
    examples/lab`` should mean what it says; a directory without one is still
    refused when it is read, naming the directory.
    """
    folder = Path(value)
    if folder.is_dir() and (folder / "spec.yaml").is_file():
        return str(folder / "spec.yaml")
    return value
