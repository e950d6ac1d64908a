"""The built wheel works on its own: templates and schemas inside, CLI runs outside the checkout."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.helpers import ROOT, example

pytestmark = pytest.mark.slow


def test_wheel_installs_and_runs_outside_the_checkout(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(ROOT)],
                   check=True, capture_output=True, text=True)
    wheel = next(dist.glob("fabgen-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "fabgen/py.typed" in names
    assert "fabgen/schemas/fabgen-spec.schema.json" in names and "fabgen/schemas/nccl-topo.xsd" in names
    assert any(n.startswith("fabgen/templates/") and n.endswith(".j2") for n in names)
    collection = "fabgen/ansible/ansible_collections/fabgen/fabgen/"
    assert {collection + f for f in ("galaxy.yml", "meta/runtime.yml", "plugins/modules/render.py",
                                     "plugins/filter/switch_config.yml")} <= set(names), "the Ansible collection ships"

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = venv / "bin" / "pip"
    subprocess.run([str(pip), "install", "-q", str(wheel)], check=True, capture_output=True, text=True)

    work = tmp_path / "elsewhere"
    work.mkdir()
    shutil.copy(example("lab"), work / "spec.yaml")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    fabgen = str(venv / "bin" / "fabgen")
    run = subprocess.run([fabgen, "validate", "spec.yaml"], cwd=work, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    run = subprocess.run([fabgen, "generate", "spec.yaml", "-o", "out"], cwd=work, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert (work / "out" / "manifest.json").is_file() and (work / "out" / "cabling.csv").is_file()
    generated = {p.relative_to(work / "out").as_posix() for p in (work / "out").rglob("*") if p.is_file()}
    assert any(p.startswith("switches/") for p in generated) or len(generated) >= 2
    # The installed package must not be reading the checkout's files.
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import fabgen._resources as r; print(r.resource_dir('templates'))"],
                           cwd=work, env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert str(ROOT) not in where and where.endswith("fabgen/templates")
