"""Small helpers shared by tests: edit an example spec, run the CLI in-process."""

from __future__ import annotations

import copy
import io
import os
import shutil
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any, NoReturn

import pytest
from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
EXAMPLE_NAMES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "spec.yaml").is_file())
LARGE_EXAMPLES = frozenset({"llama3-24k", "meta-24k"})
"""24k-GPU examples: goldens as digests, and left out of tests that render every example many times."""


def example(name: str) -> Path:
    return EXAMPLES / name / "spec.yaml"


def spec_data(name: str = "lab") -> dict[str, Any]:
    yaml = YAML(typ="safe", pure=True)
    return copy.deepcopy(yaml.load(example(name).read_text()))


def dump(data: dict[str, Any]) -> str:
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()


def edited(edit: Callable[[dict[str, Any]], None], name: str = "lab") -> str:
    """The example's spec as YAML text after ``edit`` changed its data."""
    data = spec_data(name)
    edit(data)
    return dump(data)


def run_cli(*argv: str) -> tuple[int, str, str]:
    from fabgen.cli import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as exc:
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def read_wiring(paths: list[Path | str] | list[Path]) -> list[Any]:
    """Every cable once: what lint reads from ``--wiring``, deduplicated."""
    from fabgen.lint.observed import read_evidence
    from fabgen.wiring import dedupe_links

    return dedupe_links(list(read_evidence(paths).links))


def never_called(what: str) -> Callable[..., NoReturn]:
    """A stand-in for a step a limit must refuse before: calling it fails the test, naming the step."""
    def called(*args: object, **kwargs: object) -> NoReturn:
        raise AssertionError(f"{what} ran, but the limit should have refused the input first")
    return called


def require_tool(name: str) -> str:
    """The tool's path; skip when absent, fail under FABGEN_REQUIRE_REFERENCE=1 (``.ci/run`` installs it)."""
    path = shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")
    if path is None:
        message = f"{name} not installed"
        if os.environ.get("FABGEN_REQUIRE_REFERENCE") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return path
