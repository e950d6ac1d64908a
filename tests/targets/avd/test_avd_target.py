"""The ``avd`` target itself: opt-in, one file per EOS switch, YAML that reads back as written, a check that bites."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from fabgen import pipeline
from fabgen.targets.avd.structured import structured_config
from fabgen.targets.avd.target import check_avd, dump_yaml
from fabgen.targets.eos.config import eos_config
from fabgen.targets.registry import select_targets
from tests.helpers import example

LAB = pipeline.plan_fabric(pipeline.load_spec(example("lab")))


def test_opt_in() -> None:
    assert "avd" not in {t.name for t in select_targets(None)}
    assert not [p for p in pipeline.render_fabric(LAB) if p.endswith(".avd.yaml")]
    files = pipeline.render_fabric(LAB, ["avd"])
    assert sorted(files) == sorted(f"switches/{s.name}.avd.yaml" for s in LAB.switches if s.os == "eos")


def test_file_reads_back_as_the_structured_config() -> None:
    for switch in LAB.switches:
        text = pipeline.render_fabric(LAB, ["avd"], [switch.name])[f"switches/{switch.name}.avd.yaml"]
        assert YAML(typ="safe").load(text) == structured_config(eos_config(LAB, switch))


def test_check_refuses_what_is_not_fabgens() -> None:
    path = "switches/spine-01.avd.yaml"
    good = pipeline.render_fabric(LAB, ["avd"], ["spine-01"])[path]
    assert check_avd(path, good) == []
    assert [p.message for p in check_avd(path, good.replace('hostname: "spine-01"', 'hostname: "spine-02"'))] == [
        "hostname 'spine-02' is not the file's switch 'spine-01'"]
    assert any("unexpected top-level key 'vlans'" in p.message for p in check_avd(path, good + "vlans: []\n"))
    assert check_avd(path, "- a list\n")[0].message == "not a YAML mapping"
    assert check_avd(path, 'hostname: "x\n')[0].message.startswith("not YAML")


_TEXT = st.text(st.characters(codec="utf-8"), max_size=40)
_VALUE = st.recursive(
    st.one_of(st.booleans(), st.integers(-2**40, 2**40), _TEXT),
    lambda inner: st.one_of(
        st.lists(st.dictionaries(st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True), inner, min_size=1, max_size=3),
                 min_size=1, max_size=3),
        st.dictionaries(st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True), inner, min_size=1, max_size=3),
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True), _VALUE, min_size=1, max_size=4))
def test_any_value_reads_back_unchanged(data: dict[str, Any]) -> None:
    """Any string (quotes, newlines, '#', ': ', control characters) stays one value: nothing starts a key."""
    assert YAML(typ="safe").load(dump_yaml(data)) == data
