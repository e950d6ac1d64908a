"""Same bytes under a Turkish locale (dotted/dotless i), beside tests/test_determinism.py.

``tr_TR.UTF-8`` is the classic trap for generators: a case mapping or a
collation that consults the locale turns ``I`` into ``ı`` and reorders names.
The run is skipped only when the locale is not installed (``locale -a``);
``localedef -i tr_TR -f UTF-8 tr_TR.UTF-8`` installs it.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import EXAMPLE_NAMES, LARGE_EXAMPLES, ROOT, example

TURKISH = "tr_TR.UTF-8"


def _installed(name: str) -> bool:
    try:
        listed = subprocess.run(["locale", "-a"], capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return False
    wanted = name.lower().replace("-", "")
    return any(entry.lower().replace("-", "") == wanted for entry in listed)


def _digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _generate(spec: Path, out: Path, **env: str) -> None:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("LC_") and k not in ("LANG", "LANGUAGE")}
    subprocess.run([sys.executable, "-m", "fabgen.cli", "generate", str(spec), "-o", str(out), "-q"],
                   check=True, cwd=ROOT, env={**clean, **env})


@pytest.mark.parametrize("name", [n for n in EXAMPLE_NAMES if n not in LARGE_EXAMPLES])
def test_turkish_locale_gives_the_same_bytes(tmp_path: Path, name: str) -> None:
    if not _installed(TURKISH):
        pytest.skip(f"locale {TURKISH} is not installed (locale -a)")
    probe = subprocess.run([sys.executable, "-c", "import locale; print(locale.setlocale(locale.LC_ALL, ''))"],
                           capture_output=True, text=True, env={**os.environ, "LC_ALL": TURKISH})
    assert probe.returncode == 0 and "tr_TR" in probe.stdout, probe.stderr  # the locale really is in effect
    _generate(example(name), tmp_path / "c", LC_ALL="C", PYTHONHASHSEED="0", TZ="UTC")
    _generate(example(name), tmp_path / "tr", LC_ALL=TURKISH, LANG=TURKISH, PYTHONHASHSEED="977",
              TZ="Europe/Istanbul")
    assert _digest(tmp_path / "tr") == _digest(tmp_path / "c")
