"""The pre-commit hooks, run by the real ``pre-commit`` tool against a throwaway repository.

``pre-commit try-repo`` installs a clone of this repository's HEAD (the hooks
as committed; other people's work in progress in the shared tree does not leak
in) into a hook environment under ``PRE_COMMIT_HOME`` (a temporary directory;
the install needs PyPI), then runs the hooks on a throwaway repository that
holds a good spec, a spec with a lint error and one that does not validate.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[1]
LAB = ROOT / "examples" / "lab" / "spec.yaml"
HOOKS = ROOT / ".pre-commit-hooks.yaml"


def test_hook_definitions() -> None:
    hooks = {h["id"]: h for h in YAML(typ="safe").load(HOOKS.read_text())}
    assert set(hooks) == {"fabgen-validate", "fabgen-lint", "fabgen-generate-check"}
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert hook["entry"].split()[0] == "fabgen", "the console script, not python -m"
    for name in ("fabgen-validate", "fabgen-lint"):
        assert hooks[name]["types"] == ["yaml"] and "files" in hooks[name]
    assert "--format parsable" in hooks["fabgen-lint"]["entry"]
    check = hooks["fabgen-generate-check"]
    assert check["entry"] == "fabgen generate --check", "--check in the entry: the hook can never write"
    assert check["pass_filenames"] is False and "files" not in check and "types" not in check


def _readme_config() -> dict[str, Any]:
    """The .pre-commit-config.yaml the README tells people to write."""
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("pre-commit (`.pre-commit-hooks.yaml`)"):]
    block = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    return YAML(typ="safe").load(block)  # type: ignore[no-any-return]


def _git_out(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)


def test_readme_rev_is_an_exact_commit_of_this_history_with_every_hook_it_uses() -> None:
    """No release tag exists, so the README pins a commit; it must exist here and define the hooks it names."""
    (repo,) = _readme_config()["repos"]
    rev = repo["rev"]
    assert re.fullmatch(r"[0-9a-f]{40}", rev), "an exact commit: a branch name moves, a short sha can collide"
    if _git_out("rev-parse", "--is-shallow-repository").stdout.strip() == "true":
        pytest.skip("shallow clone: the pinned commit may be outside the fetched history")
    assert _git_out("cat-file", "-e", f"{rev}^{{commit}}").returncode == 0, f"README's rev {rev} is not a commit here"
    assert _git_out("merge-base", "--is-ancestor", rev, "HEAD").returncode == 0, (
        f"README's rev {rev} is not in HEAD's history (rebased or squashed?): pin a commit of this branch")
    at_rev = YAML(typ="safe").load(_git_out("show", f"{rev}:.pre-commit-hooks.yaml").stdout)
    used = {hook["id"] for hook in repo["hooks"]}
    assert used <= {hook["id"] for hook in at_rev}, f"hooks missing at {rev}: {used - {h['id'] for h in at_rev}}"
    assert used == {"fabgen-validate", "fabgen-lint", "fabgen-generate-check"}
    files = {hook["id"]: hook.get("files") for hook in repo["hooks"]}
    assert files["fabgen-validate"] == files["fabgen-lint"] is not None, "one files: for both spec hooks"


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"})


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    clone = tmp_path_factory.mktemp("hook-repo") / "fabgen"
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(clone)], check=True,
                   capture_output=True)
    return clone


def _try_repo(repo: Path, hook: str, home: Path, source: Path) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("pre-commit", path=str(Path(sys.executable).parent)) or shutil.which("pre-commit")
    assert exe, "pre-commit is a test dependency (pip install -e '.[test]')"
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    env.pop("PRE_COMMIT", None)
    return subprocess.run([exe, "try-repo", str(source), hook, "--all-files", "--verbose"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=1200, check=False)


@pytest.mark.slow
def test_hooks_block_bad_specs_with_file_and_line(tmp_path: Path, pre_commit_home: Path, hook_repo: Path) -> None:
    repo = tmp_path / "site"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "good").mkdir()
    shutil.copy(LAB, repo / "good" / "spec.yaml")
    (repo / "ci.yaml").write_text("not: [a, fabgen, spec\n")  # not a spec by name: the hooks leave it alone
    _git(repo, "add", "-A")

    for hook in ("fabgen-validate", "fabgen-lint"):
        run = _try_repo(repo, hook, pre_commit_home, hook_repo)
        assert run.returncode == 0, run.stdout + run.stderr
        assert "Passed" in run.stdout

    (repo / "bad").mkdir()
    text = LAB.read_text()
    assert "  mtu: 9214\n" in text
    (repo / "bad" / "lab-spec.yaml").write_text(text.replace("  mtu: 9214\n", "  mtu: 1500\n"))
    line = text.splitlines().index("  mtu: 9214") + 1
    _git(repo, "add", "-A")
    run = _try_repo(repo, "fabgen-lint", pre_commit_home, hook_repo)
    assert run.returncode == 1, run.stdout + run.stderr
    assert f"bad/lab-spec.yaml:{line}:8: [error] switch MTU 1500" in run.stdout
    assert "(FG116)" in run.stdout
    assert "good/spec.yaml" not in run.stdout, "only the bad spec is reported"

    (repo / "broken.spec.yaml").write_text(text.replace("  rails: 4\n", "  rails: 4\n  railz: 4\n"))
    broken_line = text.splitlines().index("  rails: 4") + 2
    _git(repo, "add", "-A")
    run = _try_repo(repo, "fabgen-validate", pre_commit_home, hook_repo)
    assert run.returncode == 1, run.stdout + run.stderr
    assert f"broken.spec.yaml:{broken_line}:3: unknown key 'railz'" in run.stdout


def _run(repo: Path, home: Path) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("pre-commit", path=str(Path(sys.executable).parent)) or shutil.which("pre-commit")
    assert exe, "pre-commit is a test dependency (pip install -e '.[test]')"
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    env.pop("PRE_COMMIT", None)
    return subprocess.run([exe, "run", "--all-files", "--verbose"], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=1200, check=False)


def _status(output: str, name: str) -> str:
    """``Passed`` / ``Failed`` / ``(no files to check)Skipped`` of one hook in ``pre-commit run``'s report."""
    line = next(line for line in output.splitlines() if line.startswith(name + "."))
    return line.rstrip(".").rsplit(".", 1)[-1].strip()


@pytest.mark.slow
def test_readme_config_works_as_written(tmp_path: Path, pre_commit_home: Path, hook_repo: Path) -> None:
    """The README's config, ``repo:`` pointed at a clone of this checkout and ``rev:`` at its HEAD: validate runs,
    lint runs, committed output is checked. (The README's own rev is an older commit, whose fabgen renders fewer
    targets than this one; that it exists and defines every hook is checked apart.)"""
    from fabgen.pipeline import generate, load_spec

    config = _readme_config()
    (entry,) = config["repos"]
    readme_text = (ROOT / "README.md").read_text()
    block = readme_text[readme_text.index("pre-commit (`.pre-commit-hooks.yaml`)"):].split("```yaml\n", 1)[1]
    block = block.split("```", 1)[0].replace(entry["repo"], str(hook_repo), 1)
    head = subprocess.run(["git", "-C", str(hook_repo), "rev-parse", "HEAD"], check=True, capture_output=True,
                          text=True).stdout.strip()
    block = block.replace(str(entry["rev"]), head, 1)
    spec_arg, _, out_arg = entry["hooks"][2]["args"]

    site = tmp_path / "site"
    (site / "clusters").mkdir(parents=True)
    shutil.copy(LAB, site / spec_arg)
    generate(load_spec(site / spec_arg), site / out_arg)
    (site / ".pre-commit-config.yaml").write_text(block)
    (site / "ci.yaml").write_text("not: [a, fabgen, spec\n")  # outside clusters/: the spec hooks leave it alone
    _git(site, "init", "-q")
    _git(site, "add", "-A")

    run = _run(site, pre_commit_home)
    assert run.returncode == 0, run.stdout + run.stderr
    statuses = {name: _status(run.stdout, name) for name in ("fabgen validate", "fabgen lint", "fabgen generate --check")}
    assert statuses == dict.fromkeys(statuses, "Passed"), (statuses, run.stdout)

    # A spec edit without regenerating: the output check fails with the diff; the spec itself is fine.
    spec = site / spec_arg
    spec.write_text(spec.read_text().replace("NCCL_IB_TIMEOUT: 20", "NCCL_IB_TIMEOUT: 22"))
    _git(site, "add", "-A")
    run = _run(site, pre_commit_home)
    assert run.returncode == 1, run.stdout + run.stderr
    assert _status(run.stdout, "fabgen validate") == "Passed" and _status(run.stdout, "fabgen lint") == "Passed"
    assert _status(run.stdout, "fabgen generate --check") == "Failed"
    assert "-NCCL_IB_TIMEOUT=20" in run.stdout and "+NCCL_IB_TIMEOUT=22" in run.stdout
    assert f"differ from {out_arg}" in run.stdout
    assert "NCCL_IB_TIMEOUT=20" in (site / out_arg / "hosts" / "_profiles" / "lab-node" / "nccl.conf").read_text(), \
        "never writes"

    # Why the README gives files: to both hooks. The config it had before (files: on lint only) leaves a
    # spec that is not named like *spec.yaml to lint alone: validate reports no files to check.
    pattern = entry["hooks"][0]["files"]
    old = {"repos": [{"repo": str(hook_repo), "rev": entry["rev"],
                      "hooks": [{"id": "fabgen-validate"}, {"id": "fabgen-lint", "files": pattern}]}]}
    with (site / ".pre-commit-config.yaml").open("w") as handle:
        YAML(typ="safe").dump(old, handle)
    _git(site, "add", "-A")
    run = _run(site, pre_commit_home)
    assert _status(run.stdout, "fabgen validate") == "(no files to check)Skipped", run.stdout
    assert _status(run.stdout, "fabgen lint") == "Passed", run.stdout
