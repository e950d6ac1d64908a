"""Ansible: the collection's plugins in process, and the example playbook under a real ``ansible-playbook``.

The playbooks use the Galaxy artifact: built with ``ansible-galaxy collection
build`` from the package's collection source and installed with
``ansible-galaxy collection install`` into a temporary collections path, once
per session (``installed_collection`` in ``support.py``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fabgen.ansible import _core, collection_dir, collections_path
from fabgen.errors import FabgenError
from tests.ansible.support import (  # the *_fixture imports register the fixtures
    BIN,
    LAB,
    PLAYBOOK_DIR,
    ansible_env,
    collection_artifact_fixture,  # noqa: F401
    fresh_cache_fixture,  # noqa: F401
    installed_collection_fixture,  # noqa: F401
    inventory_devices,
    play,
    task,
    tree,
)
from tests.helpers import run_cli


def _bad_spec(tmp_path: Path) -> Path:
    path = tmp_path / "bad.yaml"
    path.write_text(LAB.read_text().replace("dscp: [26]", "dscp: [64]"))
    return path


def _edited_spec(tmp_path: Path) -> Path:
    path = tmp_path / "timeout.yaml"
    path.write_text(LAB.read_text().replace("NCCL_IB_TIMEOUT: 20", "NCCL_IB_TIMEOUT: 22"))
    return path


# --- in process: the shared core and the filter plugin ---------------------------------------------------


def _filters() -> dict[str, Any]:
    pytest.importorskip("ansible")
    spec = importlib.util.spec_from_file_location("fabgen_filter_under_test",
                                                  collection_dir() / "plugins" / "filter" / "fabgen.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.FilterModule().filters()  # type: ignore[no-any-return]


def test_ansible_path_command() -> None:
    code, stdout, _ = run_cli("ansible-path")
    assert code == 0 and Path(stdout.strip()) == collections_path()
    assert (collections_path() / "ansible_collections" / "fabgen" / "fabgen" / "galaxy.yml").is_file()
    code, stdout, _ = run_cli("ansible-path", "--collection")
    assert code == 0 and Path(stdout.strip()) == collection_dir()
    for entry in ("plugins/filter/fabgen.py", "plugins/action/render.py", "plugins/modules/render.py",
                  "meta/runtime.yml", "README.md"):
        assert (collection_dir() / entry).is_file(), entry
    assert str(collection_dir()).startswith(str(Path(_core.__file__).parent))  # inside the package: ships in the wheel


def test_host_files_match_generate(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run_cli("generate", str(LAB), "-o", str(out))[0] == 0
    manifest = json.loads((out / "manifest.json").read_text())["files"]
    files = _filters()["host_files"](str(LAB), "lab01")
    profile = {rel for rel, e in manifest.items() if e["device"] == "lab-node"}
    own = {rel for rel, e in manifest.items() if e["device"] == "lab01"}
    assert set(files) == own | profile and own and profile
    for rel, text in files.items():
        assert (out / rel).read_text() == text and type(text) is str


def test_host_files_hold_every_source_of_the_hosts_install_list() -> None:
    """What a play copies by install.json is in the host's files: the profile's sysctl.conf, or the host's own."""
    for host in ("lab01", "lab04"):  # lab04 has a NIC out of service: a sysctl file of its own
        files = _core.host_files(str(LAB), host)
        entries = json.loads(files[f"hosts/{host}/install.json"])["files"]
        assert {e["source"] for e in entries} <= set(files), host
        sysctl = [e for e in entries if e["dest"].startswith("/etc/sysctl.d/")]
        expected = "hosts/lab04/sysctl.conf" if host == "lab04" else "hosts/_profiles/lab-node/sysctl.conf"
        assert [e["source"] for e in sysctl] == [expected], host


def test_switch_config_matches_generate(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run_cli("generate", str(LAB), "-o", str(out))[0] == 0
    manifest = json.loads((out / "manifest.json").read_text())["files"]
    files = _filters()["switch_config"](str(LAB), "leaf-r0-p00-01")
    assert set(files) == {rel for rel, e in manifest.items() if e["device"] == "leaf-r0-p00-01"} and files
    assert all((out / rel).read_text() == text for rel, text in files.items())


def test_filters_accept_tagged_and_lazy_inputs() -> None:
    """ansible-core 2.19 hands plugins str subclasses and lazy containers: normalised at the boundary."""

    class Tagged(str):
        tags = ("origin",)

    class Lazy(list):  # type: ignore[type-arg]
        pass

    files = _core.host_files(Tagged(str(LAB)), Tagged("lab04"), Lazy(["nccl-env"]))  # lab04: its own NCCL pair
    assert files and all(type(k) is str for k in files)
    assert _core.normalise({"a": Lazy([Tagged("x")])}) == {"a": ["x"]}
    assert type(_core.normalise(Tagged("x"))) is str


def test_filter_errors_carry_file_line(tmp_path: Path) -> None:
    filters = _filters()  # skips without ansible
    from ansible.errors import AnsibleFilterError  # type: ignore[import-untyped]

    bad = _bad_spec(tmp_path)
    with pytest.raises(AnsibleFilterError,
                       match=rf"^fabgen.fabgen.host_files: {bad}:\d+:\d+: Input should be less than or equal to 63"):
        filters["host_files"](str(bad), "lab01")
    with pytest.raises(AnsibleFilterError, match="no host or switch named 'lab1' in cluster lab; did you mean 'lab01'"):
        filters["host_files"](str(LAB), "lab1")
    with pytest.raises(AnsibleFilterError, match=r"'spine-01' is not a host \(use fabgen.fabgen.switch_config\)"):
        filters["host_files"](str(LAB), "spine-01")
    with pytest.raises(AnsibleFilterError, match="'lab01' is not a switch"):
        filters["switch_config"](str(LAB), "lab01")
    with pytest.raises(AnsibleFilterError, match="no such file"):
        filters["lint"](str(tmp_path / "missing.yaml"))
    with pytest.raises(AnsibleFilterError, match="is not a file"):
        filters["lint"](str(tmp_path))
    with pytest.raises(AnsibleFilterError, match="spec must be a path, YAML text or the spec as a mapping"):
        filters["switch_config"](None, "spine-01")


def test_lint_filter_returns_plain_dicts(tmp_path: Path) -> None:
    lint_module = pytest.importorskip("fabgen.lint")
    if not callable(getattr(lint_module, "lint", None)):
        with pytest.raises(Exception, match="linter is not available"):
            _filters()["lint"](str(LAB))
        return
    findings = _filters()["lint"](str(LAB))
    assert isinstance(findings, list) and json.loads(json.dumps(findings)) == findings
    spec = tmp_path / "cnp-lossless.yaml"  # CNP made lossless: the linter has something to say
    spec.write_text(LAB.read_text().replace("priority: 6, strict: true}", "priority: 6, strict: true, lossless: true}"))
    findings = _filters()["lint"](str(spec))
    assert findings and all(isinstance(f, dict) for f in findings)
    assert any(str(spec) in json.dumps(f) for f in findings)


def test_spec_and_plan_cached_per_path_and_mtime(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(LAB.read_text())
    for host in ("lab01", "lab02", "lab03", "lab04"):
        _core.host_files(str(spec), host)
    _core.switch_config(str(spec), "spine-01")
    assert _core.cache_stats()["misses"] == 1 and _core.cache_stats()["hits"] == 4
    first = _core.loaded(str(spec))
    spec.write_text(LAB.read_text().replace("NCCL_IB_TIMEOUT: 20", "NCCL_IB_TIMEOUT: 22"))
    os.utime(spec, ns=(spec.stat().st_mtime_ns + 10**9,) * 2)  # even on a coarse clock the mtime moves
    assert "NCCL_IB_TIMEOUT=22" in _core.host_files(str(spec), "lab01")["hosts/_profiles/lab-node/nccl.conf"]
    assert _core.loaded(str(spec)) is not first and _core.cache_stats()["misses"] == 2


def test_render_to_writes_only_changes_and_honours_check(tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    outcome = _core.render_to(str(LAB), ["lab01"], dest, check=True)
    assert outcome.changed and not dest.exists()
    outcome = _core.render_to(str(LAB), ["lab01"], dest)
    assert outcome.changed and {rel for rel, _, _ in outcome.changes} == set(outcome.files)
    assert all(before is None for _, before, _ in outcome.changes)
    stamp = tree(dest)
    assert not _core.render_to(str(LAB), ["lab01"], dest).changed and tree(dest) == stamp
    changed = _core.render_to(str(_edited_spec(tmp_path)), ["lab01"], dest)
    rels = [rel for rel, _, _ in changed.changes]
    assert sorted(rels) == ["hosts/_profiles/lab-node/nccl.conf", "hosts/_profiles/lab-node/nccl.env"]  # lab01's
    before, after = next((b, a) for r, b, a in changed.changes if r == "hosts/_profiles/lab-node/nccl.conf")
    assert before is not None and "NCCL_IB_TIMEOUT=20" in before and "NCCL_IB_TIMEOUT=22" in after
    assert not list(dest.rglob(".*fabgen-*"))  # no temporaries left behind


def test_render_to_glob_renders_many_devices_in_one_call(tmp_path: Path) -> None:
    outcome = _core.render_to(str(LAB), ["*"], tmp_path / "dest")
    devices = {rel.split("/")[1].removesuffix(".cfg") for rel in outcome.files if not rel.startswith("hosts/_")}
    assert {"lab01", "lab04"} <= devices and any(d.startswith("leaf-") for d in devices)
    assert _core.cache_stats()["misses"] == 1


def test_render_to_refuses_symlinks_inside_dest(tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    (dest / "hosts").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (dest / "hosts" / "lab01").symlink_to(outside)
    with pytest.raises(FabgenError, match="is a symlink"):
        _core.render_to(str(LAB), ["lab01"], dest)
    assert not list(outside.iterdir())


def test_plugins_import_fabgen_lazily() -> None:
    """Loading the plugin files must not import fabgen: a play without it fails only where it is used."""
    pytest.importorskip("ansible")
    code = (
        "import importlib.util, sys\n"
        "for kind, name in (('filter', 'fabgen.py'), ('action', 'render.py')):\n"
        f"    path = {str(collection_dir() / 'plugins')!r} + '/' + kind + '/' + name\n"
        "    spec = importlib.util.spec_from_file_location('p_' + kind, path)\n"
        "    spec.loader.exec_module(importlib.util.module_from_spec(spec))\n"
        "print(sorted(m for m in sys.modules if m == 'fabgen' or m.startswith('fabgen.')))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/")
    assert proc.stdout.strip() == "[]"


@pytest.mark.slow
def test_playbook_renders_everything_then_reports_no_change(tmp_path: Path, installed_collection: Path) -> None:
    out = tmp_path / "out"
    code, report, stderr = play(tmp_path, installed_collection, "-e", f"fabgen_out={out}")
    assert code == 0, (report, stderr)
    devices = inventory_devices()
    render = task(report, "Write this device's files")
    assert sorted(render) == sorted(devices)
    assert all(r["changed"] is True and r["status"] == "ok" for r in render.values())
    stats = report["stats"]
    assert all(stats[d]["failures"] == 0 and stats[d]["changed"] == 1 for d in devices)
    # The filters ran in the same play, on hosts and switches.
    assert task(report, "Look at a host's files")["lab01"]["ansible_facts"]["fabgen_files"]
    assert task(report, "Look at a switch's configuration")["spine-01"]["ansible_facts"]["fabgen_files"]

    # Byte for byte what `fabgen generate` writes, less the cluster-wide files (no device owns them).
    reference = tmp_path / "reference"
    assert run_cli("generate", str(LAB), "-o", str(reference))[0] == 0
    manifest = json.loads((reference / "manifest.json").read_text())["files"]
    expected = {rel for rel, e in manifest.items() if e["device"]}
    first = tree(out)
    assert set(first) == expected
    assert all((reference / rel).read_bytes() == (out / rel).read_bytes() for rel in expected)

    code, report, stderr = play(tmp_path, installed_collection, "-e", f"fabgen_out={out}")
    assert code == 0, (report, stderr)
    assert all(report["stats"][d]["changed"] == 0 and report["stats"][d]["ok"] >= 1 for d in devices)
    assert all(r["changed"] is False for r in task(report, "Write this device's files").values())
    assert tree(out) == first  # nothing rewritten: same bytes, same mtimes


@pytest.mark.slow
def test_playbook_check_and_diff_mode_report_without_writing(tmp_path: Path, installed_collection: Path) -> None:
    out = tmp_path / "out"
    assert play(tmp_path, installed_collection, "-e", f"fabgen_out={out}", "--limit", "lab01,spine-01")[0] == 0
    before = tree(out)
    spec = _edited_spec(tmp_path)
    code, report, stderr = play(tmp_path, installed_collection, "-e", f"fabgen_out={out}", "-e", f"fabgen_spec={spec}",
                                 "--limit", "lab01,spine-01", "--check", "--diff")
    assert code == 0, (report, stderr)
    render = task(report, "Write this device's files")
    assert render["lab01"]["changed"] is True and render["spine-01"]["changed"] is False
    diffs = {d["after_header"]: d for d in render["lab01"]["diff"]}
    conf = diffs[f"{out}/hosts/_profiles/lab-node/nccl.conf"]  # the pair lab01 installs
    assert "NCCL_IB_TIMEOUT=20" in conf["before"] and "NCCL_IB_TIMEOUT=22" in conf["after"]
    assert render["lab01"]["changed_files"] == sorted(render["lab01"]["changed_files"])
    assert tree(out) == before
    # What a person sees with --diff: the default callback prints each file's unified diff.
    printed = stderr
    assert f"+++ after: {out}/hosts/_profiles/lab-node/nccl.conf" in printed
    assert "-NCCL_IB_TIMEOUT=20" in printed and "+NCCL_IB_TIMEOUT=22" in printed


@pytest.mark.slow
def test_playbook_bad_spec_fails_the_task_with_file_line(tmp_path: Path, installed_collection: Path) -> None:
    bad = _bad_spec(tmp_path)
    code, report, printed = play(tmp_path, installed_collection, "-e", f"fabgen_out={tmp_path / 'out'}", "-e", f"fabgen_spec={bad}",
                                  "--limit", "lab01")
    assert code != 0
    assert f"{bad}:57:34: Input should be less than or equal to 63 (at qos.classes.roce.dscp[0])" in printed
    result = task(report, "Write this device's files")["lab01"]
    assert result["status"] == "failed"
    assert result["msg"].startswith(f"{bad}:57:34: Input should be less than or equal to 63")
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_play_without_fabgen_fails_only_at_the_fabgentask(tmp_path: Path, installed_collection: Path) -> None:
    shadow = tmp_path / "shadow" / "fabgen"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('fabgen is not installed (simulated)')\n")
    playbook = tmp_path / "play.yml"
    playbook.write_text(
        "- hosts: lab01\n  gather_facts: false\n  vars: {ansible_connection: local}\n  tasks:\n"
        "    - name: Before\n      ansible.builtin.debug: {msg: hello}\n"
        f"    - name: Render\n      fabgen.fabgen.render: {{spec: {LAB}, dest: {tmp_path / 'out'}}}\n"
    )
    code, report, _ = play(tmp_path, installed_collection, playbook=playbook, PYTHONPATH=str(shadow.parent))
    assert code != 0
    assert task(report, "Before")["lab01"]["status"] == "ok"
    failed = task(report, "Render")["lab01"]
    assert failed["status"] == "failed" and "needs the fabgen package" in failed["msg"]
    assert "not installed (simulated)" in failed["msg"]


@pytest.mark.slow
def test_example_inventory_parses_with_ansible_inventory(tmp_path: Path) -> None:
    exe = BIN / "ansible-inventory"
    if not exe.exists():
        pytest.skip("ansible-inventory is not installed")
    env = ansible_env(tmp_path, collections_path())
    proc = subprocess.run([str(exe), "--list"], capture_output=True, text=True, cwd=PLAYBOOK_DIR, env=env,
                          check=True)
    data = json.loads(proc.stdout)
    assert data["leaf"]["hosts"] == ["leaf-r0-p00-01", "leaf-r1-p00-01", "leaf-r2-p00-01", "leaf-r3-p00-01"]
    assert data["rail_2"]["hosts"] == ["leaf-r2-p00-01"]
    assert set(data["switches"]["children"]) == {"leaf", "spine"}
    assert data["_meta"]["hostvars"]["lab01"]["ansible_host"] == "192.0.2.1"  # hosts first in the mgmt pool (fabgen.plan.addressing)
    assert data["_meta"]["hostvars"]["spine-01"]["fabgen_tier"] == "spine"
    # How Ansible would reach each device: the OS group's vars reach every member.
    spine, host = data["_meta"]["hostvars"]["spine-01"], data["_meta"]["hostvars"]["lab01"]
    assert spine["ansible_network_os"] == "arista.eos.eos"
    assert spine["ansible_connection"] == "ansible.netcommon.httpapi" and spine["ansible_httpapi_use_ssl"] is True
    assert host["ansible_connection"] == "ssh" and "ansible_network_os" not in host


@pytest.mark.slow
def test_playbook_lint_tag_fails_on_lint_errors(tmp_path: Path, installed_collection: Path) -> None:
    lint_module = pytest.importorskip("fabgen.lint")
    if not callable(getattr(lint_module, "lint", None)):
        pytest.skip("fabgen.lint.lint is not available")
    code, report, printed = play(tmp_path, installed_collection, "--tags", "lint")
    assert code == 0, printed
    assert [r["status"] for r in task(report, "Lint the spec once").values()] == ["ok"]
    spec = tmp_path / "cnp-lossless.yaml"
    spec.write_text(LAB.read_text().replace("priority: 6, strict: true}", "priority: 6, strict: true, lossless: true}"))
    code, report, printed = play(tmp_path, installed_collection, "--tags", "lint", "-e", f"fabgen_spec={spec}")
    assert code != 0
    assert [r["status"] for r in task(report, "Lint the spec once").values()] == ["failed"]
    assert f"{spec}:" in printed and "[error]" in printed


def test_render_to_refuses_bad_arguments_as_errors_not_tracebacks(tmp_path: Path) -> None:
    with pytest.raises(FabgenError, match="device must be a non-empty string, got 3"):
        _core.render_to(str(LAB), [3], tmp_path / "dest")  # type: ignore[list-item]
    with pytest.raises(FabgenError, match=r"targets must be a list of target names, got \[1\]"):
        _core.render_to(str(LAB), ["lab01"], tmp_path / "dest", targets=[1])  # type: ignore[list-item]
    with pytest.raises(FabgenError, match="spec must be a path, YAML text or the spec as a mapping, got 7"):
        _core.render_to(7, ["lab01"], tmp_path / "dest")
    assert not (tmp_path / "dest").exists()
