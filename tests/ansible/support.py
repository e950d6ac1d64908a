"""What the Ansible tests share: running the real tools hermetically and reading their results as data.

The fixtures live here, not in a ``conftest.py``: the suite's modules import
``conftest`` by that bare name, which a second ``conftest.py`` would shadow.
Test modules import the ``*_fixture`` functions; pytest finds them by name.

Every run gets its own ANSIBLE_HOME, local temp and config
(``examples/ansible/ansible.cfg``), no cows, no retry files, and a recording
callback so results are read as data, not scraped from the screen.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fabgen.ansible import _core, collection_dir
from tests.helpers import ROOT, example, run_cli

LAB = example("lab")
PLAYBOOK_DIR = ROOT / "examples" / "ansible"
BIN = Path(sys.executable).parent


def tree(root: Path) -> dict[str, tuple[str, int]]:
    """``{relpath: (sha256, mtime_ns)}`` of every file under ``root``: equal trees mean nothing was rewritten."""
    return {p.relative_to(root).as_posix(): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}


def galaxy(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    """Run ``ansible-galaxy`` (offline: only local artifacts) and insist it succeeds."""
    exe = BIN / "ansible-galaxy"
    if not exe.exists():
        pytest.skip("ansible-galaxy is not installed in this environment (pip install 'fabgen[test]')")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    env.update(ANSIBLE_HOME=str(home), ANSIBLE_NOCOLOR="1", LC_ALL="C.UTF-8")
    proc = subprocess.run([str(exe), *args], capture_output=True, text=True, env=env, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


# ansible-core ships no JSON stdout callback (it moved to ansible.posix, which is not installed offline):
# a tiny aggregate callback records every result as data, and the default callback still prints for people.
RECORDER = """
import json, os
from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "fabgen_record"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.tasks = {}

    def _record(self, result, status):
        host = getattr(result, "host", None) or result._host
        task = getattr(result, "task", None) or result._task
        data = dict(getattr(result, "result", None) or result._result)
        data["status"] = status
        self.tasks.setdefault(task.get_name(), {})[host.get_name()] = data

    def v2_runner_on_ok(self, result, **kwargs):
        self._record(result, "ok")

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._record(result, "failed")

    def v2_runner_on_skipped(self, result):
        self._record(result, "skipped")

    def v2_playbook_on_stats(self, stats):
        summary = {h: stats.summarize(h) for h in sorted(stats.processed)}
        with open(os.environ["FABGEN_TEST_RECORD"], "w") as handle:
            json.dump({"tasks": self.tasks, "stats": summary}, handle, default=str)
"""


def ansible_env(tmp_path: Path, collections: Path, **extra: str) -> dict[str, str]:
    home = tmp_path / "ansible-home"
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    (home / "callbacks").mkdir(exist_ok=True)
    (home / "callbacks" / "fabgen_record.py").write_text(RECORDER)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    env.update(
        ANSIBLE_CONFIG=str(PLAYBOOK_DIR / "ansible.cfg"),
        ANSIBLE_HOME=str(home),
        ANSIBLE_COLLECTIONS_PATH=str(collections),
        ANSIBLE_LOCAL_TEMP=str(home / "tmp"),
        ANSIBLE_REMOTE_TEMP=str(home / "tmp"),
        ANSIBLE_NOCOWS="1",
        ANSIBLE_RETRY_FILES_ENABLED="0",
        ANSIBLE_NOCOLOR="1",
        ANSIBLE_CALLBACK_PLUGINS=str(home / "callbacks"),
        ANSIBLE_CALLBACKS_ENABLED="fabgen_record",
        FABGEN_TEST_RECORD=str(home / "record.json"),
        ANSIBLE_GALAXY_DISABLE_GPG_VERIFY="1",
        ANSIBLE_DEPRECATION_WARNINGS="0",
        ANSIBLE_PYTHON_INTERPRETER=sys.executable,
        PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        LC_ALL="C.UTF-8",
    )
    env.update(extra)
    return env


def play(tmp_path: Path, collections: Path, *args: str, playbook: Path = PLAYBOOK_DIR / "render.yml",
          **env: str) -> tuple[int, dict[str, Any], str]:
    """Run ansible-playbook with the collection found on ``collections``; (exit code, recorded results, output)."""
    exe = BIN / "ansible-playbook"
    if not exe.exists():
        pytest.skip("ansible-playbook is not installed in this environment (pip install 'fabgen[test]')")
    environ = ansible_env(tmp_path, collections, **env)
    record = Path(environ["FABGEN_TEST_RECORD"])
    record.unlink(missing_ok=True)
    proc = subprocess.run([str(exe), str(playbook), *args], capture_output=True, text=True,
                          cwd=PLAYBOOK_DIR, env=environ, timeout=600, check=False)
    if not record.is_file():
        pytest.fail(f"ansible-playbook recorded nothing (rc {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc.returncode, json.loads(record.read_text()), proc.stdout + proc.stderr


def task(report: dict[str, Any], name_start: str) -> dict[str, Any]:
    for name, hosts in report["tasks"].items():
        if name.startswith(name_start):
            return hosts  # type: ignore[no-any-return]
    raise AssertionError(f"no task {name_start!r} in {sorted(report['tasks'])}")


def inventory_devices() -> list[str]:
    code, stdout, _ = run_cli("inventory", str(LAB))
    assert code == 0
    from ruamel.yaml import YAML

    data = YAML(typ="safe", pure=True).load(stdout)
    names = list(data["all"]["children"]["hosts"]["hosts"])
    for tier in data["all"]["children"]["switches"]["children"].values():
        names += list(tier["hosts"])
    return names


# --- fixtures ---------------------------------------------------------------------------------------------


@pytest.fixture(autouse=True, name="fresh_cache")
def fresh_cache_fixture() -> None:
    """Each test starts with an empty spec/plan cache, so cache counts are the test's own."""
    _core.cache_clear()


@pytest.fixture(scope="session", name="collection_artifact")
def collection_artifact_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``ansible-galaxy collection build`` of the package's collection source: the tarball Galaxy would get."""
    work = tmp_path_factory.mktemp("galaxy-build")
    galaxy("collection", "build", str(collection_dir()), "--output-path", str(work), home=work / "home")
    (artifact,) = work.glob("fabgen-fabgen-*.tar.gz")
    return artifact


@pytest.fixture(scope="session", name="installed_collection")
def installed_collection_fixture(collection_artifact: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built artifact installed with ``ansible-galaxy collection install``: a collections path (offline)."""
    root = tmp_path_factory.mktemp("galaxy-install")
    galaxy("collection", "install", str(collection_artifact), "-p", str(root / "collections"), home=root / "home")
    assert (root / "collections" / "ansible_collections" / "fabgen" / "fabgen" / "MANIFEST.json").is_file()
    return root / "collections"


