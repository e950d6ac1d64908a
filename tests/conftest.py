"""Shared fixtures.

Reference data (SONiC YANG models, real NCCL topology files, LLDP samples) is
other people's data: it is read from ``../shared/reference`` and never copied
into the project. Tests that need it skip when the folder is absent, and fail
instead when ``FABGEN_REQUIRE_REFERENCE=1`` (as in ``.ci/run``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
REFERENCE = ROOT.parent / "shared" / "reference"


def require_reference(*parts: str) -> Path:
    """Path under ``../shared/reference``; skip (or fail under FABGEN_REQUIRE_REFERENCE=1) if absent."""
    path = REFERENCE.joinpath(*parts)
    if not path.exists():
        message = f"reference data not found: {path}"
        if os.environ.get("FABGEN_REQUIRE_REFERENCE") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture
def reference_dir() -> Path:
    return require_reference()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-goldens", action="store_true", help="rewrite golden files from the current output")


@pytest.fixture
def update_goldens(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-goldens"))
