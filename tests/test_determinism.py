"""Same spec, same bytes: across processes, hash seeds, locales, time zones and host order."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fabgen.pipeline import load_spec, plan_fabric, render_fabric
from tests.helpers import EXAMPLE_NAMES, LARGE_EXAMPLES, ROOT, edited, example


def _tree_digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*")) if p.is_file()
    }


def _generate(spec: Path, out: Path, **env: str) -> None:
    subprocess.run([sys.executable, "-m", "fabgen.cli", "generate", str(spec), "-o", str(out), "-q"],
                   check=True, cwd=ROOT, env={**os.environ, **env})


@pytest.mark.parametrize("name", [n for n in EXAMPLE_NAMES if n not in LARGE_EXAMPLES])
def test_byte_identical_across_processes(tmp_path: Path, name: str) -> None:
    variants = [
        {"PYTHONHASHSEED": "1", "LC_ALL": "C", "TZ": "UTC"},
        {"PYTHONHASHSEED": "4242", "LC_ALL": "C.UTF-8", "TZ": "Asia/Kolkata"},
    ]
    digests = []
    for index, env in enumerate(variants):
        out = tmp_path / f"out{index}"
        _generate(example(name), out, **env)
        digests.append(_tree_digest(out))
    assert digests[0] == digests[1]


def test_key_order_does_not_matter() -> None:
    def reorder(data: dict) -> None:  # type: ignore[type-arg]
        for key in list(data)[::-1]:
            data[key] = data.pop(key)
        classes = data["qos"]["classes"]
        for key in list(classes)[::-1]:
            classes[key] = classes.pop(key)
    first = render_fabric(plan_fabric(load_spec(example("lab"))))
    second = render_fabric(plan_fabric(load_spec(edited(reorder))))
    assert first == second
