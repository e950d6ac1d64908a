"""ShippedLoader (fabgen.targets.environment) reads a source the way Jinja's FileSystemLoader does, in fewer calls."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from jinja2 import Environment, FileSystemLoader, TemplateNotFound

from fabgen._resources import resource_dir
from fabgen.targets.environment import ShippedLoader


def _both(root: Path, name: str) -> tuple[tuple[str, str, bool], tuple[str, str, bool]]:
    env = Environment()
    ours = ShippedLoader(str(root)).get_source(env, name)
    jinja = FileSystemLoader(str(root)).get_source(env, name)
    return (ours[0], ours[1], ours[2]()), (jinja[0], jinja[1], jinja[2]())


@pytest.mark.parametrize("data", [b"plain\n", b"crlf\r\nline\r\n", b"old mac\rline\r", b"\xef\xbb\xbfbom {{ x }}",
                                  b"", "caf\u00e9 \u2013\n".encode()])
def test_same_text_name_and_uptodate_as_jinja(tmp_path: Path, data: bytes) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "t.j2").write_bytes(data)
    ours, jinja = _both(tmp_path, "sub/t.j2")
    assert ours == jinja and ours[2] is True


def test_every_shipped_template_reads_the_same() -> None:
    root = resource_dir("templates")
    names = FileSystemLoader(str(root)).list_templates()
    assert len(names) > 10
    for name in names:
        ours, jinja = _both(root, name)
        assert ours == jinja, name


def test_an_edit_is_not_uptodate_and_a_missing_or_odd_name_is_not_found(tmp_path: Path) -> None:
    (tmp_path / "t.j2").write_text("a")
    _, _, uptodate = ShippedLoader(str(tmp_path)).get_source(Environment(), "t.j2")
    os.utime(tmp_path / "t.j2", ns=(0, 0))
    assert not uptodate()
    (tmp_path / "dir.j2").mkdir()
    os.mkfifo(tmp_path / "fifo.j2")
    for name in ("missing.j2", "dir.j2", "fifo.j2", "../t.j2"):
        with pytest.raises(TemplateNotFound):
            ShippedLoader(str(tmp_path)).get_source(Environment(), name)


def test_a_guarded_templates_context_is_jinjas() -> None:
    """GuardedTemplate.new_context merges the globals by dict updates: same names, order and values as Jinja's."""
    from jinja2 import Template

    from fabgen.targets.environment import GuardedEnvironment, GuardedTemplate

    env = GuardedEnvironment()
    env.globals["shadowed"] = "env"
    assert env.template_class is GuardedTemplate
    for extra in (None, {}, {"shadowed": "template", "t": 1}):
        template = env.from_string("{{ shadowed }}", globals=extra)
        assert isinstance(template, GuardedTemplate)
        for variables in (None, {}, {"v": 1, "shadowed": "var", "range": 2}):
            ours = template.new_context(None if variables is None else dict(variables))
            jinja = Template.new_context(template, None if variables is None else dict(variables))
            assert list(ours.parent.items()) == list(jinja.parent.items()), (extra, variables)
            assert ours.globals_keys == jinja.globals_keys and ours.parent is not env.globals
        assert template.render(shadowed="var") == "var"
    with pytest.raises(TypeError):
        env.from_string("x").new_context({1: "not a name"})  # type: ignore[dict-item]
    assert env.from_string("{{ x }}").new_context({"x": 1}, shared=True).parent == {"x": 1}
