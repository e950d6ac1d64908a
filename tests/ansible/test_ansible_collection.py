"""The ``fabgen.fabgen`` collection as Galaxy ships it: build, install, ``ansible-doc``, FQCN plays, sanity.

Everything runs the real tools (``ansible-galaxy``, ``ansible-doc``,
``ansible-playbook``, ``ansible-test``) on the artifact built from the
package's collection source and installed into a temporary collections path
(fixtures in ``support.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

import fabgen
from fabgen.ansible import _core, collection_dir
from tests.ansible.support import (  # the *_fixture imports register the fixtures
    BIN,
    LAB,
    ansible_env,
    collection_artifact_fixture,  # noqa: F401
    fresh_cache_fixture,  # noqa: F401
    installed_collection_fixture,  # noqa: F401
    play,
    task,
    tree,
)
from tests.helpers import run_cli


def _galaxy_yml() -> dict[str, Any]:
    return YAML(typ="safe", pure=True).load((collection_dir() / "galaxy.yml").read_text())  # type: ignore[no-any-return]


def test_galaxy_yml_names_the_collection_and_carries_fabgens_version() -> None:
    meta = _galaxy_yml()
    assert (meta["namespace"], meta["name"]) == ("fabgen", "fabgen")
    assert meta["version"] == fabgen.__version__, "bump galaxy.yml's version with fabgen's"
    assert meta["license"] == ["Apache-2.0"] and meta["authors"] and (collection_dir() / meta["readme"]).is_file()
    assert "**/__pycache__" in meta["build_ignore"]
    runtime = YAML(typ="safe", pure=True).load((collection_dir() / "meta" / "runtime.yml").read_text())
    assert runtime["requires_ansible"].startswith(">=")


def test_spec_as_data_renders_what_the_file_renders() -> None:
    """A dict from inventory vars is the same spec: the same files, byte for byte."""
    data = YAML(typ="safe", pure=True).load(LAB.read_text())
    _core.cache_clear()
    assert _core.host_files(data, "lab01") == _core.host_files(str(LAB), "lab01")
    assert _core.switch_config(data, "spine-01") == _core.switch_config(str(LAB), "spine-01")
    assert _core.host_files(LAB.read_text(), "lab02") == _core.host_files(str(LAB), "lab02")  # YAML text too
    _core.host_files(dict(data), "lab03")  # an equal dict is a cache hit, not a second plan
    assert _core.cache_stats()["misses"] == 3


def test_spec_as_data_errors_name_the_key() -> None:
    data = YAML(typ="safe", pure=True).load(LAB.read_text())
    data["qos"]["classes"]["roce"]["dscp"] = [64]
    with pytest.raises(fabgen.FabgenError) as info:
        _core.host_files(data, "lab01")
    assert info.value.lines()[0].startswith("<inventory>:")
    assert info.value.lines()[0].endswith("Input should be less than or equal to 63 (at qos.classes.roce.dscp[0])")


def test_spec_as_data_cannot_inject_keys() -> None:
    """A string value with a newline and a key in it stays a string: dumping quotes it."""
    data = YAML(typ="safe", pure=True).load(LAB.read_text())
    data["cluster"]["name"] = "lab\nrouting: {}\n"
    text = _core.spec_text(data)
    assert YAML(typ="safe", pure=True).load(text)["cluster"]["name"] == "lab\nrouting: {}\n"


# --- the Galaxy artifact and the real tools ----------------------------------------------------------------


@pytest.mark.slow
def test_artifact_holds_the_collection_and_nothing_else(collection_artifact: Path) -> None:
    with tarfile.open(collection_artifact) as tar:
        names = set(tar.getnames())
        manifest = json.load(tar.extractfile("MANIFEST.json"))  # type: ignore[arg-type]
    assert {"MANIFEST.json", "FILES.json", "README.md", "meta/runtime.yml", "plugins/modules/render.py",
            "plugins/action/render.py", "plugins/filter/fabgen.py", "plugins/filter/host_files.yml",
            "plugins/filter/switch_config.yml", "plugins/filter/lint.yml", "tests/sanity/ignore-2.19.txt"} <= names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    info = manifest["collection_info"]
    assert (info["namespace"], info["name"], info["version"]) == ("fabgen", "fabgen", fabgen.__version__)
    assert info["license"] == ["Apache-2.0"]


def _doc(installed: Path, tmp_path: Path, *args: str) -> str:
    env = ansible_env(tmp_path, installed)
    proc = subprocess.run([str(BIN / "ansible-doc"), *args], capture_output=True, text=True, env=env, timeout=300,
                          check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


@pytest.mark.slow
def test_ansible_doc_shows_the_module_and_filters(installed_collection: Path, tmp_path: Path) -> None:
    doc = json.loads(_doc(installed_collection, tmp_path, "--json", "fabgen.fabgen.render"))["fabgen.fabgen.render"]
    options = doc["doc"]["options"]
    assert set(options) == {"spec", "dest", "device", "targets", "templates"}
    assert options["spec"]["required"] is True and options["spec"]["type"] == "raw"
    assert doc["doc"]["attributes"]["check_mode"]["support"] == "full"
    assert doc["doc"]["attributes"]["diff_mode"]["support"] == "full"
    assert {"files", "changed_files"} <= set(doc["return"])
    assert "fabgen.fabgen.render:" in doc["examples"]
    text = _doc(installed_collection, tmp_path, "fabgen.fabgen.render")
    assert str(installed_collection) in text and "This module has a corresponding action plugin" in text
    listed = _doc(installed_collection, tmp_path, "-t", "filter", "-l", "fabgen.fabgen")
    assert {"fabgen.fabgen.host_files", "fabgen.fabgen.switch_config", "fabgen.fabgen.lint"} <= set(listed.split())
    for name in ("host_files", "switch_config", "lint"):
        filt = json.loads(_doc(installed_collection, tmp_path, "-t", "filter", "--json", f"fabgen.fabgen.{name}"))
        assert filt[f"fabgen.fabgen.{name}"]["doc"]["options"]["_input"]["type"] == "raw"


DATA_PLAY = """
- name: The spec as data, from vars (as an inventory or group_vars would hold it)
  hosts: lab01,spine-01
  gather_facts: false
  vars:
    ansible_connection: local
    fabgen_spec_data: "{{{{ lookup('ansible.builtin.file', '{spec}') | from_yaml }}}}"
  tasks:
    - name: Render from data
      fabgen.fabgen.render:
        spec: "{{{{ fabgen_spec_data }}}}"
        dest: "{out}"
    - name: Filter from data
      ansible.builtin.set_fact:
        fabgen_files: "{{{{ fabgen_spec_data | fabgen.fabgen.switch_config(inventory_hostname) }}}}"
      when: fabgen_kind == 'switch'
"""


@pytest.mark.slow
def test_playbook_with_the_spec_as_data(installed_collection: Path, tmp_path: Path) -> None:
    by_path, by_data = tmp_path / "by-path", tmp_path / "by-data"
    assert play(tmp_path, installed_collection, "-e", f"fabgen_out={by_path}", "--limit", "lab01,spine-01")[0] == 0
    playbook = tmp_path / "data.yml"
    playbook.write_text(DATA_PLAY.format(spec=LAB, out=by_data))
    code, report, printed = play(tmp_path, installed_collection, playbook=playbook)
    assert code == 0, printed
    assert all(r["changed"] is True for r in task(report, "Render from data").values())
    assert {k: v[0] for k, v in tree(by_data).items()} == {k: v[0] for k, v in tree(by_path).items()}
    facts = task(report, "Filter from data")["spine-01"]["ansible_facts"]["fabgen_files"]
    assert facts == {rel: (by_path / rel).read_text() for rel in facts} and facts

    bad = tmp_path / "bad.yaml"
    bad.write_text(LAB.read_text().replace("dscp: [26]", "dscp: [64]"))
    playbook.write_text(DATA_PLAY.format(spec=bad, out=by_data))
    code, report, printed = play(tmp_path, installed_collection, "--limit", "lab01", playbook=playbook)
    assert code != 0
    failed = task(report, "Render from data")["lab01"]
    assert failed["status"] == "failed"
    assert failed["msg"].startswith("<inventory>:") and failed["msg"].endswith(
        "Input should be less than or equal to 63 (at qos.classes.roce.dscp[0])")


# ansible-test bootstraps pip in each sanity venv with a get-pip.py it downloads from a CI file host, not from
# a package index. This stand-in does the same job with the interpreter's own ensurepip, then installs the pip
# ansible-test asked for from the configured index; the sanity requirements come from that index as usual.
GET_PIP_STAND_IN = '''
import subprocess, sys
args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
# ensurepip blanks pip's configuration in its own process (PIP_CONFIG_FILE=devnull): run it apart.
subprocess.check_call([sys.executable, "-m", "ensurepip", "--upgrade"], stdout=subprocess.DEVNULL)
raise SystemExit(subprocess.call([sys.executable, "-m", "pip", "install", "--quiet", *args]))
'''


@pytest.mark.slow
def test_ansible_test_sanity_is_clean(installed_collection: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Every sanity test ansible-test has for a collection, on the installed copy (its only ignore: the GPL header)."""
    exe = BIN / "ansible-test"
    if not exe.exists():
        pytest.skip("ansible-test is not installed")
    import ansible.release  # type: ignore[import-untyped]

    home = tmp_path_factory.mktemp("ansible-test-home")
    pip_version = _bootstrap_pip_version()
    cache = home / ".ansible" / "test" / "cache"
    cache.mkdir(parents=True)
    (cache / f"get_pip_{pip_version.replace('.', '_')}.py").write_text(GET_PIP_STAND_IN)
    ignore = collection_dir() / "tests" / "sanity" / f"ignore-{'.'.join(ansible.release.__version__.split('.')[:2])}.txt"
    assert ignore.is_file(), f"add {ignore.name} for this ansible-core"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    env.update(HOME=str(home), ANSIBLE_HOME=str(home / "ansible"), LC_ALL="C.UTF-8")
    where = installed_collection / "ansible_collections" / "fabgen" / "fabgen"
    proc = subprocess.run([str(exe), "sanity", "--python", "3.11", "--color", "no"], cwd=where, env=env,
                          capture_output=True, text=True, timeout=1500, check=False)
    output = proc.stdout + proc.stderr
    if proc.returncode != 0 and "No matching distribution found" in output:
        pytest.skip("ansible-test could not install its sanity requirements (no package index reachable)")
    assert proc.returncode == 0, output
    ran = [line.split('"')[1] for line in output.splitlines() if line.startswith("Running sanity test")]
    assert {"validate-modules", "ansible-doc", "pylint", "pep8", "compile", "import", "yamllint",
            "action-plugin-docs", "runtime-metadata"} <= set(ran)


def _bootstrap_pip_version() -> str:
    """The pip version ansible-test bootstraps (its cache file is named after it), read from its source."""
    import importlib.util
    import re

    spec = importlib.util.find_spec("ansible_test")
    assert spec is not None and spec.origin is not None
    source = (Path(spec.origin).parent / "_internal" / "python_requirements.py").read_text()
    found = re.search(r"default_packages = dict\(\s*pip='([0-9.]+)'", source)
    if found is None:
        pytest.skip("cannot tell which pip this ansible-test bootstraps")
    return found.group(1)


def test_readme_ansible_commands_exist() -> None:
    """The README's collection commands name real CLI options."""
    assert run_cli("ansible-path", "--collection")[0] == 0


@pytest.mark.slow
def test_example_cfg_finds_the_collection_in_the_checkout(tmp_path: Path) -> None:
    """Without ANSIBLE_COLLECTIONS_PATH, examples/ansible/ansible.cfg points Ansible at the package's source."""
    env = ansible_env(tmp_path, collection_dir())
    del env["ANSIBLE_COLLECTIONS_PATH"]
    proc = subprocess.run([str(BIN / "ansible-doc"), "--json", "fabgen.fabgen.render"], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["fabgen.fabgen.render"]["doc"]["filename"].startswith(str(collection_dir()))
