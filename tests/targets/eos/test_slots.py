"""A text vouched for by its slots (:mod:`fabgen.targets.eos.slots`) gets the full check's answer.

The slot proof never reads a filled text: it matches each value against its
type's token pattern and takes equalities. These tests hold it to what it
claims: each token match is the shape pass's pattern; two value lists of one
signature fill to texts of one shape text (so one verdict); and, through the
renderer's own vouching, thousands of edited values get exactly the full
check's problems, at the same line and column.
"""

from __future__ import annotations

import random
import re
from typing import Any

import pytest
from conftest import EXAMPLES
from hypothesis import given, settings
from hypothesis import strategies as st

import fabgen.pipeline as pipeline
from fabgen.targets.base import RenderContext
from fabgen.targets.environment import environment
from fabgen.targets.eos import check, slots
from fabgen.targets.eos.config import TARGET, TEMPLATE
from fabgen.targets.eos.fill import Split, fill
from fabgen.targets.eos.session import TEMPLATE as SESSION_TEMPLATE
from fabgen.targets.eos.session import session_name, session_path
from fabgen.targets.eos.shape import ASN, CONFIG_PASSES, IP, NAME_PASS, SESSION_PASSES, TEXT, shape
from fabgen.targets.eos.values import PlanValues

PATTERNS = {
    "description": TEXT, "comment": TEXT, "hostname": r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}",
    "address": rf"{IP}/3[12]", "asn": ASN, "remote-as": ASN, "neighbor": IP, "router-id": IP,
    "network": rf"{IP}/3[12]", "name": r"fabgen-[0-9a-f]{12}",
}
"""Each value type's token pattern, as its shape pass reads it (the pass's group, and its ``/3[12]`` context)."""

_PIECES = st.sampled_from(["0", "1", "9", "10", "25", "255", "256", "01", "00", "4294967295", "4294967296",
                           ".", "/31", "/32", "/3", " ", "bfd", "?", "\t", "\n", "a", "-", "fabgen-", "x" * 239,
                           "abcdef012345", "é", "Z"])
_TOKENS = st.lists(_PIECES, max_size=8).map("".join)


def test_every_pattern_is_its_pass_group() -> None:
    for name, pattern in PATTERNS.items():
        entry = slots._TOKENS[name][0]
        assert f"({pattern.removesuffix('/3[12]')})" in entry[0].pattern, name


@settings(max_examples=600, deadline=None)
@given(st.sampled_from(sorted(PATTERNS)), st.lists(_TOKENS, min_size=1, max_size=4))
def test_a_match_is_its_pattern(name: str, tokens: list[str]) -> None:
    """All tokens match the pass's pattern when the match says so; and the other way round, but for free text,
    where ``bfd`` is also looked for across two tokens (refusing more is safe)."""
    found = slots._TOKENS[name][1](tuple(tokens))
    every = all(re.fullmatch(PATTERNS[name], t) for t in tokens)
    if found is not None:
        assert every
    if every and not (PATTERNS[name] == TEXT and "bfd" in "".join(tokens)):
        assert found is not None


# -- a real shape, filled with edited values -----------------------------------------------------------


def _fleet(spec: str) -> tuple[RenderContext, list[tuple[Any, list[str]]]]:
    """A rendered plan's context (its shapes cached) and each EOS switch's (shape key, values)."""
    plan = pipeline.plan_fabric(pipeline.load_spec(spec))
    context = RenderContext(plan=plan, env=environment(None))
    switches = [s for s in plan.switches if s.os == "eos"]
    for switch in switches:
        TARGET.render(context, switch)
    values = PlanValues(plan)
    return context, [values.key_and_values(s) for s in switches]


LAB = _fleet(str(EXAMPLES / "lab" / "spec.yaml"))


def _pieces(context: RenderContext, name: str, key: Any) -> Split:
    pieces = context.cache["eos-shapes"][(name, key)]
    assert pieces is not None
    return pieces


def _texts(context: RenderContext, key: Any, values: list[str]) -> tuple[str, str, Split, Split]:
    cfg_pieces = _pieces(context, TEMPLATE, key)
    session_pieces = _pieces(context, SESSION_TEMPLATE, key)
    cfg = fill(cfg_pieces, values)
    return cfg, fill(session_pieces, [values[0], session_name(cfg), cfg[:-len("end\n")]]), cfg_pieces, session_pieces


def _edit(rng: random.Random, values: list[str]) -> list[str]:
    """One value changed: a character replaced, put in or taken out, or another value of the switch copied in."""
    values = list(values)
    at = rng.randrange(len(values))
    value = values[at]
    kind = rng.choice(("replace", "insert", "delete", "copy", "copy"))
    if kind == "copy":
        values[at] = rng.choice(values)
        return values
    where = rng.randrange(len(value) + 1)
    char = rng.choice("0123456789./ -abfdx?!\t")
    values[at] = (value[:where] + char + value[where + 1:] if kind == "replace" else
                  value[:where] + char + value[where:] if kind == "insert" else value[:where] + value[where + 1:])
    return values


def _proofs(context: RenderContext, key: Any) -> tuple[slots.SlotProof, slots.SlotProof]:
    """The slot proofs of one shape's config and session, built as :class:`slots.Vouchers` builds them."""
    cfg_pieces = _pieces(context, TEMPLATE, key)
    body = slots._renumbered(slots.shape_text(cfg_pieces)[:-len("end\n")])
    return (slots.SlotProof(slots.shape_text(cfg_pieces), CONFIG_PASSES),
            slots.SlotProof(slots.shape_text(_pieces(context, SESSION_TEMPLATE, key), body), SESSION_PASSES))


@pytest.mark.parametrize("switch", range(len(LAB[1])))
def test_one_signature_is_one_shape_text(switch: int) -> None:
    context, fleet = LAB
    key, values = fleet[switch]
    cfg_proof, session_proof = _proofs(context, key)
    assert cfg_proof.ok and session_proof.ok
    by_signature: dict[Any, str] = {}
    rng = random.Random(switch)
    signed = 0
    for trial in range(400):
        edited = values if trial == 0 else _edit(rng, values)
        cfg, session, _, _ = _texts(context, key, edited)
        name = session_name(cfg)
        for kind, proof, text, flat, passes in (
                ("cfg", cfg_proof, cfg, edited, CONFIG_PASSES),
                ("session", session_proof, session, [edited[0], name, *edited], SESSION_PASSES)):
            signature = proof.signature(flat, text)
            if signature is None:
                continue
            signed += 1
            assert by_signature.setdefault((kind, signature), shape(text, passes)) == shape(text, passes), (
                kind, [v for v, w in zip(edited, values, strict=True) if v != w])
    assert signed > 300  # most edits keep every value a token: the claim is exercised, not skipped
    assert len(by_signature) > 10


@pytest.mark.parametrize("switch", range(len(LAB[1])))
def test_edited_values_get_the_full_checks_answer(switch: int) -> None:
    """Through the renderer's own vouching: whatever the full check says of an edited switch, the check says."""
    context, fleet = LAB
    key, values = fleet[switch]
    vouchers = slots.Vouchers()
    rng = random.Random(100 + switch)
    found = vouched = 0
    for trial in range(250):
        edited = values if trial == 0 else _edit(rng, values)
        cfg, session, cfg_pieces, session_pieces = _texts(context, key, edited)
        paths = f"switches/s{switch}.cfg", session_path(f"s{switch}")
        vouchers.vouch(key, (paths[0], cfg, cfg_pieces, edited),
                       (paths[1], session, session_pieces, [edited[0], session_name(cfg)]))
        vouched += check.PROVED_CLEAN.holds(paths[0], cfg)
        for path, text in zip(paths, (cfg, session), strict=True):
            full = check.full_check(path, text)
            assert check.check_eos_config(path, text) == full, (path, trial)
            found += bool(full)
    assert found > 30 and vouched > 100  # both ways are exercised


def test_a_value_that_is_no_token_is_not_vouched() -> None:
    context, fleet = LAB
    key, values = fleet[0]
    for at, bad in ((0, "title ? help"), (1, "-host"), (len(values) - 1, "10.0.0.1/33")):
        edited = list(values)
        edited[at] = bad
        cfg, _, cfg_pieces, _ = _texts(context, key, edited)
        proof = slots.SlotProof(slots.shape_text(cfg_pieces), CONFIG_PASSES)
        assert proof.ok and proof.signature(values, fill(cfg_pieces, values)) is not None
        assert proof.signature(edited, cfg) is None, bad


def test_a_sentinel_in_an_unknown_line_proves_nothing() -> None:
    context, fleet = LAB
    key, _ = fleet[0]
    text = slots.shape_text(_pieces(context, TEMPLATE, key))
    assert slots.SlotProof(text, CONFIG_PASSES).ok
    assert not slots.SlotProof(text.replace("   mtu ", "   mtu \x000\x00 ", 1), CONFIG_PASSES).ok
    assert not slots.SlotProof(text.replace("\nip routing\n", "\nip routing\nrouter bgp 5\n"), CONFIG_PASSES).ok
    assert not slots.SlotProof(text, (NAME_PASS, *CONFIG_PASSES[1:])).ok  # a pass missing: its values unproved


def test_every_switch_of_the_examples_is_vouched() -> None:
    """The point of the proof: in fabgen's own output every text is vouched for (none re-read)."""
    for spec in ("lab", "meta-24k"):
        plan = pipeline.plan_fabric(pipeline.load_spec(EXAMPLES / spec / "spec.yaml"))
        context = RenderContext(plan=plan, env=environment(None))
        for switch in plan.switches:
            if switch.os == "eos":
                files = TARGET.render(context, switch)
                assert all(check.PROVED_CLEAN.holds(path, text) for path, text in files.items()), switch.name
                assert all(check.check_eos_config(path, text) == [] for path, text in files.items())


def test_a_value_equal_to_a_constant_token_is_not_vouched() -> None:
    """A comment value equal to one of the shape's own comments would be numbered with it by the shape pass,
    so its shape text differs from the usual one although its values' equalities do not."""
    context, fleet = LAB
    key, values = fleet[0]
    cfg_pieces = _pieces(context, TEMPLATE, key)
    proof = slots.SlotProof(slots.shape_text(cfg_pieces), CONFIG_PASSES)
    edited = list(values)
    edited[2] = "generated from the cluster spec: change the spec, not this file"  # the mmu note's slot
    base, text = fill(cfg_pieces, values), fill(cfg_pieces, edited)
    assert shape(base) != shape(text)
    assert proof.signature(edited, text) is None


@pytest.mark.parametrize("switch", range(len(LAB[1])))
def test_a_sessions_groups_taken_from_its_config_sign_alike(switch: int) -> None:
    """The session takes every group it shares with its config from the config's signature
    (:meth:`slots.SlotProof.reusing`): for edited values that must be the signature it would sign itself, and
    only its own name and comments are signed anew."""
    context, fleet = LAB
    key, values = fleet[switch]
    cfg_proof, session_proof = _proofs(context, key)
    reused = session_proof.reusing(cfg_proof, 2)
    own = [group.name for group, index in zip(session_proof._groups, reused, strict=True) if index is None]
    assert sorted(own) == ["comment", "name"]
    rng = random.Random(300 + switch)
    compared = 0
    for trial in range(200):
        edited = values if trial == 0 else _edit(rng, values)
        cfg, session, _, _ = _texts(context, key, edited)
        flat = [edited[0], session_name(cfg), *edited]
        signature = cfg_proof.signature(edited, cfg)
        if signature is None:
            continue
        compared += 1
        assert session_proof.signature(flat, session, (signature, reused)) == session_proof.signature(flat, session)
    assert compared > 100


def test_a_group_signed_differently_is_not_taken() -> None:
    """A session group whose shape tokens differ from its config's (a session-only description, say) is
    signed by the session itself: the config's answer did not look for that token."""
    context, fleet = LAB
    key, _ = fleet[0]
    cfg_pieces, session_pieces = _pieces(context, TEMPLATE, key), _pieces(context, SESSION_TEMPLATE, key)
    cfg_proof = slots.SlotProof(slots.shape_text(cfg_pieces), CONFIG_PASSES)
    body = slots._renumbered(slots.shape_text(cfg_pieces)[:-len("end\n")])
    text = slots.shape_text(session_pieces, body).replace("show session-config diffs\n",
                                                          "   description extra\nshow session-config diffs\n")
    session_proof = slots.SlotProof(text, SESSION_PASSES)
    names = [group.name for group, index in zip(session_proof._groups, session_proof.reusing(cfg_proof, 2),
                                                 strict=True) if index is None]
    assert "description" in names


def test_a_picker_fills_as_the_plain_fill_does() -> None:
    from fabgen.targets.eos.fill import picker
    context, fleet = LAB
    for key, values in fleet:
        for name in (TEMPLATE, SESSION_TEMPLATE):
            pieces = _pieces(context, name, key)
            flat = values if name == TEMPLATE else [values[0], "fabgen-0123456789ab", "body\n"]
            assert fill(pieces, flat, picker(pieces)) == fill(pieces, flat)
    for pieces in ((["a"], []), (["a", "b"], [1]), (["a", "b", "c"], [1, 0])):
        assert fill(pieces, ["x", "y"], picker(pieces)) == fill(pieces, ["x", "y"])
