"""Shared fixtures.

Reference data (SONiC YANG models, real NCCL topology files, LLDP samples) is
other people's data: it is read from ``../shared/reference`` and never copied
into the project. Tests that need it skip when the folder is absent, and fail
instead when ``FABGEN_REQUIRE_REFERENCE=1`` (as in ``.ci/run``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

# Performance is measured by bench/, never by a test: a property test slowed by a loaded CI machine must not fail
# on Hypothesis's per-example deadline (200 ms by default), only on what it asserts.
settings.register_profile("fabgen", deadline=None)
settings.load_profile("fabgen")

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


_OWN_CACHE = pytest.StashKey[str]()


def pytest_configure(config: pytest.Config) -> None:
    """Tests never read or fill the user's own caches (plans, compiled templates): one private directory per run."""
    if "FABGEN_CACHE_DIR" not in os.environ:
        os.environ["FABGEN_CACHE_DIR"] = tempfile.mkdtemp(prefix="fabgen-test-cache-")
        config.stash[_OWN_CACHE] = os.environ["FABGEN_CACHE_DIR"]


def pytest_unconfigure(config: pytest.Config) -> None:
    own = config.stash.get(_OWN_CACHE, None)
    if own is not None:
        shutil.rmtree(own, ignore_errors=True)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-goldens", action="store_true", help="rewrite golden files from the current output")


@pytest.fixture
def update_goldens(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-goldens"))
