"""ShippedLoader (fabgen.targets.environment) reads a source the way Jinja's FileSystemLoader does, in fewer calls."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
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


class _Html:
    def __html__(self) -> str:
        return "<b>as is</b>"


class _Str(str):
    """A str subclass: not ``type(value) is str``, so it takes MarkupSafe's own path."""


class _Int(int):
    def __str__(self) -> str:
        return "<int & 'more'>"


ESCAPED_VALUES: list[object] = [
    "", "plain", "&", "<", ">", '"', "'", "&amp;", "a<b>c\"d'e&f", "é\u2028\x00", 0, -1, 10**30, True, False, None,
    1.5, float("nan"), _Html(), _Str("<s>"), _Int(3), b"<bytes>", ("<t>",), ["<l>"],
]


@pytest.mark.parametrize("value", ESCAPED_VALUES, ids=repr)
def test_print_escaped_prints_what_markupsafe_escape_prints(value: object) -> None:
    """print_escaped is MarkupSafe's escape, character for character, for every kind of value a template prints."""
    from markupsafe import Markup, escape

    from fabgen.targets.environment import print_escaped

    assert print_escaped(value) == str(escape(value))
    assert print_escaped(Markup("<kept>")) == "<kept>"


@given(st.text() | st.integers() | st.booleans() | st.none() | st.floats(allow_nan=False))
def test_print_escaped_agrees_with_markupsafe_on_anything(value: object) -> None:
    from markupsafe import escape

    from fabgen.targets.environment import print_escaped

    assert print_escaped(value) == str(escape(value))


def test_autoescaped_guarded_templates_render_what_jinjas_do() -> None:
    """Output, blocks captured by ``set``, macros, ``caller``, filters, ``|safe``, ``~``, ``{% autoescape %}``:
    a GuardedTemplate (printing through print_escaped) renders the same text as Jinja's own Template."""
    from jinja2 import Template

    from fabgen.targets.environment import GuardedEnvironment, GuardedTemplate, print_escaped

    source = (
        "{{ s }}|{{ n }}|{{ h }}|{{ s|safe }}|{{ s ~ n }}|{{ s|upper }}|{{ [s, n]|join(',') }}\n"
        "{% set captured %}<i>{{ s }}</i>{% endset %}{{ captured }}|{{ captured|length }}\n"
        "{% macro m(x) %}[{{ x }}{{ caller() if caller }}]{% endmacro %}{{ m(s) }}{% call m(n) %}{{ s }}{% endcall %}\n"
        "{% filter upper %}{{ s }}<u>{% endfilter %}|{% autoescape false %}{{ s }}{% endautoescape %}"
        "{% autoescape true %}{{ s }}{% endautoescape %}|{{ none }}|{{ b }}\n"
    )
    values = {"s": "<a href=\"x\">&'</a>", "n": 42, "h": _Html(), "none": None, "b": True}
    for autoescape in (True, False):
        ours = GuardedEnvironment(autoescape=autoescape).from_string(source)
        jinja = Environment(autoescape=autoescape).from_string(source)
        assert isinstance(ours, GuardedTemplate) and type(jinja) is Template
        assert ours.render(values) == jinja.render(values)
        assert ("escape", print_escaped) in ours.root_render_func.__globals__.items()
