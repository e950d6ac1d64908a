"""The twin needs root, Linux and Debian's frr: tests that boot it skip without them, with the reason,
and fail instead under ``FABGEN_REQUIRE_TWIN=1`` (as in ``.ci/run``)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
POD32 = ROOT / "tests" / "data" / "twin" / "pod32.yaml"
LAB = ROOT / "examples" / "lab" / "spec.yaml"


def twin_unavailable() -> str | None:
    if not sys.platform.startswith("linux"):
        return "the twin needs Linux"
    if os.geteuid() != 0:
        return "the twin needs root"
    if not os.access("/usr/lib/frr/bgpd", os.X_OK) or shutil.which("vtysh") is None:
        return "the twin needs FRR (apt-get install -y frr)"
    if shutil.which("ping") is None:
        return "the twin's ping-tool check needs ping (apt-get install -y iputils-ping)"
    return None


def require_twin() -> None:
    reason = twin_unavailable()
    if reason is None:
        return
    if os.environ.get("FABGEN_REQUIRE_TWIN") == "1":
        pytest.fail(reason)
    pytest.skip(reason)


def require_frr() -> None:
    """``bgpd -C`` (FRR's own parser) needs only the binary; as root it also skips the privilege drop error."""
    if not os.access("/usr/lib/frr/bgpd", os.X_OK) or os.geteuid() != 0:
        reason = "FRR's parser needs /usr/lib/frr/bgpd and root"
        if os.environ.get("FABGEN_REQUIRE_TWIN") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
