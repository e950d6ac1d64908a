"""``--templates DIR``: a user's overlay runs sandboxed and strict, and fails cleanly.

* Sandbox: a template that reaches for Python internals (``''.__class__.__mro__``,
  ``cycler.__init__.__globals__``, ``self._TemplateReference__context``,
  ``lipsum.__globals__``, ...) fails with exit 2, one line naming the overlay
  template and the line of the attempt, nothing written, and nothing executed.
* StrictUndefined everywhere: a typo is an error naming template and line, not
  an empty string in a switch config.
* Any other failure inside a template (a syntax error, a missing include,
  ``1/0``, runaway recursion) is the same kind of clean, located error.
* Overlays are real: a benign one changes the output, and what it renders still
  goes through the target's own output check.

Every shipped template is attacked (found by walking the template directory),
in the first example whose render uses it, so new templates are covered.
"""

from __future__ import annotations

import os
import shutil
from functools import cache
from pathlib import Path

import pytest
from jinja2 import StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

from fabgen._resources import resource_dir
from fabgen.errors import FabgenError
from fabgen.pipeline import load_spec, plan_fabric
from fabgen.targets.environment import environment
from fabgen.targets.render import render_files
from tests.helpers import EXAMPLE_NAMES, LARGE_EXAMPLES, example, run_cli

SHIPPED = resource_dir("templates")
TEMPLATES = sorted(str(p.relative_to(SHIPPED)) for p in Path(SHIPPED).rglob("*") if p.is_file())
CANDIDATE_EXAMPLES = [n for n in EXAMPLE_NAMES if n not in LARGE_EXAMPLES]

ESCAPES = {
    "str-mro": "{{ ''.__class__.__mro__ }}",
    "subclasses": "{{ ().__class__.__base__.__subclasses__() }}",
    "cycler-globals": "{{ cycler.__init__.__globals__.os.system('touch CANARY') }}",
    "joiner-globals": "{{ joiner.__init__.__globals__ }}",
    "namespace-globals": "{{ namespace.__init__.__globals__ }}",
    "lipsum-globals": "{{ lipsum.__globals__['os'].system('touch CANARY') }}",
    "template-reference": "{{ self._TemplateReference__context }}",
    "format-string": "{{ '{0.__class__.__init__.__globals__}'.format(lipsum) }}",
    "func-globals": "{{ range.__self__.__import__('os').system('touch CANARY') }}",
    "getattr-filter": "{{ lipsum|attr('__globals__') }}",
}
"""Template-injection classics; each must be refused by the sandbox."""


def overlay(tmp_path: Path, template: str, body: str) -> Path:
    """An overlay directory replacing ``template`` with two harmless lines, then ``body`` on line 3."""
    root = tmp_path / "overlay"
    path = root / template
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{# a user's template #}\n{%- set harmless = 1 %}\n" + body + "\n", encoding="utf-8")
    return root


@cache
def _probe(template: str, name: str) -> bool:
    """Does rendering example ``name`` use ``template``? (An overlay with an undefined name must fail there.)"""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = overlay(Path(tmp), template, "{{ fabgen_probe_undefined_name }}")
        try:
            render_files(plan_fabric(load_spec(example(name))), templates=root)
        except FabgenError as exc:
            return any(template in line for line in exc.lines())
        return False


def example_using(template: str) -> str:
    for name in CANDIDATE_EXAMPLES:
        if _probe(template, name):
            return name
    pytest.skip(f"no example renders {template}")


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    trees: dict[str, Path] = {}

    def tree(name: str) -> Path:
        if name not in trees:
            out = tmp_path_factory.mktemp(name) / "out"
            code, _, stderr = run_cli("generate", str(example(name)), "-o", str(out), "-q")
            assert code == 0, stderr
            trees[name] = out
        return trees[name]
    return tree


@pytest.fixture
def previous(tmp_path: Path, pristine):  # type: ignore[no-untyped-def]
    """A previous generation of an example in tmp_path/out, and its files (to prove it untouched)."""
    def make(name: str) -> tuple[Path, dict[str, bytes]]:
        out = tmp_path / "out"
        shutil.copytree(pristine(name), out, symlinks=True)
        return out, _files(out)
    return make


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def assert_template_error(tmp_path: Path, name: str, out: Path, before: dict[str, bytes], root: Path,
                          template: str, line: int | None, *needles: str) -> str:
    cwd = Path.cwd()
    os.chdir(tmp_path)  # a CANARY would land here
    try:
        code, stdout, stderr = run_cli("generate", str(example(name)), "-o", str(out), "--templates", str(root))
    finally:
        os.chdir(cwd)
    assert code == 2, (code, stdout, stderr)
    assert "Traceback" not in stderr
    lines = stderr.splitlines()
    user_file = str(root / template)
    hits = [ln for ln in lines if ln.startswith(user_file + (f":{line}:" if line else ""))]
    assert hits, f"no line names {user_file}:{line}:\n{stderr}"
    for needle in needles:
        assert any(needle in ln for ln in hits), f"{needle!r} not in:\n{stderr}"
    assert _files(out) == before, "the previous output changed"
    assert not list(out.parent.glob(".out.fabgen-*"))
    assert not (tmp_path / "CANARY").exists(), "the template ran a command"
    return stderr


def test_environment_is_sandboxed_and_strict(tmp_path: Path) -> None:
    """Shipped templates may run in a lighter guarded environment; a user's overlay always in the sandbox."""
    assert environment(None).undefined is StrictUndefined
    user = environment(tmp_path)
    assert isinstance(user, SandboxedEnvironment) and user.undefined is StrictUndefined


@pytest.mark.parametrize("escape", list(ESCAPES), ids=list(ESCAPES))
@pytest.mark.parametrize("template", TEMPLATES)
def test_sandbox_escape_is_refused(tmp_path: Path, previous, template: str, escape: str) -> None:  # type: ignore[no-untyped-def]
    name = example_using(template)
    out, before = previous(name)
    root = overlay(tmp_path, template, ESCAPES[escape])
    assert_template_error(tmp_path, name, out, before, root, template, 3)


@pytest.mark.parametrize("template", TEMPLATES)
def test_typo_is_an_error_not_an_empty_string(tmp_path: Path, previous, template: str) -> None:  # type: ignore[no-untyped-def]
    name = example_using(template)
    out, before = previous(name)
    root = overlay(tmp_path, template, "{% if swtich_name_typo %}x{% endif %}")
    assert_template_error(tmp_path, name, out, before, root, template, 3, "swtich_name_typo")


@pytest.mark.parametrize(("label", "body", "needle"), [
    ("attribute-typo", "hostname {{ eos.hostnmae }}", "hostnmae"),
    ("syntax-error", "{% if eos.hostname %}unclosed", "template"),
    ("missing-include", '{% include "eos/no-such-part.j2" %}', "no such template: eos/no-such-part.j2"),
    ("division-by-zero", "{{ 1 / 0 }}", "division"),
    ("runaway-recursion", "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", "recursion"),
    ("bad-filter", "{{ eos.hostname | no_such_filter }}", "no_such_filter"),
])
def test_broken_template_is_a_located_error(tmp_path: Path, previous, label: str, body: str, needle: str) -> None:  # type: ignore[no-untyped-def]
    name = example_using("eos/hostname.j2")
    out, before = previous(name)
    root = overlay(tmp_path, "eos/hostname.j2", "!\n" + body)
    line = None if label == "syntax-error" else 4  # Jinja reports an unclosed block where the input ends
    assert_template_error(tmp_path, name, out, before, root, "eos/hostname.j2", line, needle)


def test_overlay_applies_and_its_output_is_still_checked(tmp_path: Path, previous) -> None:  # type: ignore[no-untyped-def]
    name = example_using("eos/hostname.j2")
    out, _ = previous(name)
    root = overlay(tmp_path, "eos/hostname.j2", "! site banner: managed by fabgen\n!\nhostname {{ eos.hostname }}")
    code, _, stderr = run_cli("generate", str(example(name)), "-o", str(out), "--templates", str(root), "-q")
    assert code == 0, stderr
    assert any(b"! site banner: managed by fabgen" in data for rel, data in _files(out).items() if rel.endswith(".cfg"))
    # an overlay that writes something EOS would not accept is refused by the EOS check, nothing written
    before = _files(out)
    bad = overlay(tmp_path / "bad", "eos/hostname.j2", "hostname {{ eos.hostname }}\nrm -rf /")
    code, _, stderr = run_cli("generate", str(example(name)), "-o", str(out), "--templates", str(bad))
    assert code == 2 and "Traceback" not in stderr and ".cfg:" in stderr, stderr
    assert _files(out) == before


def test_nic_script_overlay_without_plan_format_is_a_clean_error(tmp_path: Path, previous) -> None:  # type: ignore[no-untyped-def]
    """The shared script must say which plan format it reads: the plan files carry it."""
    template = "mlx5/roce-nic.sh.j2"
    if template not in TEMPLATES:
        pytest.skip(f"{template} is not shipped")
    name = example_using(template)
    out, before = previous(name)
    root = overlay(tmp_path, template, "#!/bin/sh\necho {{ version | shell_quote }}")
    code, _, stderr = run_cli("generate", str(example(name)), "-o", str(out), "--templates", str(root))
    assert code == 2 and "Traceback" not in stderr, stderr
    assert template in stderr
    assert _files(out) == before


def test_missing_templates_directory(tmp_path: Path, previous) -> None:  # type: ignore[no-untyped-def]
    out, before = previous("lab")
    code, _, stderr = run_cli("generate", str(example("lab")), "-o", str(out), "--templates", str(tmp_path / "nope"))
    assert code == 2 and "Traceback" not in stderr and "nope" in stderr, stderr
    assert _files(out) == before
    shutil.rmtree(tmp_path / "nope", ignore_errors=True)
