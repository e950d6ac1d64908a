"""The slot proof's shortcuts give the answers of the work they skip.

Each shortcut of :mod:`fabgen.targets.eos.slots` (strings already proved by
:func:`fabgen.targets.eos.text.config_texts` or :func:`~fabgen.targets.eos.text.quads`,
a group's last signature, a session's ``fabgen-`` count read from its values)
is held here against the long way on planted faults: any difference would be a
text vouched for that the full check would refuse, or the other way round.
"""

from __future__ import annotations

import random
import re

from hypothesis import given, settings
from hypothesis import strategies as st
from test_slots import LAB, _edit, _proofs, _texts

from fabgen.targets.eos import check, slots, text
from fabgen.targets.eos.session import session_name, session_path
from fabgen.targets.eos.shape import IP

_PIECES = st.sampled_from(["0", "1", "25", "255", "256", "01", ".", "/31", "/32", "/3", " ", "10.0.0.0/31",
                           "bfd", "b", "fd", "?",
                           "\t", "\n", "a", "-", "x" * 239, "é", "Z", "10.0.0.1", "fabgen-"])
_TOKENS = st.lists(st.lists(_PIECES, max_size=6).map("".join), min_size=1, max_size=5)


@settings(max_examples=400, deadline=None)
@given(_TOKENS, _TOKENS)
def test_texts_proved_by_config_texts_match_as_before(proved: list[str], tokens: list[str]) -> None:
    """A token list matched after :func:`text.config_texts` saw (some of) it matches as it does unseen."""
    text.TEXT_TOKENS.clear()
    unseen = slots._text(tuple(tokens))
    text.config_texts(proved)
    text.config_texts(tokens)
    assert slots._text(tuple(tokens)) == unseen
    assert all(slots._text((t,)) is not None for t in text.TEXT_TOKENS)



@settings(max_examples=400, deadline=None)
@given(_TOKENS, _TOKENS)
def test_config_texts_of_proved_values_are_config_text_of_each(proved: list[str], tokens: list[str]) -> None:
    """:func:`text.config_texts` returns values :data:`text.TEXT_TOKENS` holds at once: after any values were
    seen (the tokens themselves, some of them, others), each answer is still :func:`text.config_text` of each."""
    for seen in (proved, tokens, tokens[:1], proved + tokens):
        text.TEXT_TOKENS.clear()
        text.config_texts(seen)
        assert text.config_texts(tokens) == [text.config_text(t) for t in tokens]
        assert text.config_texts(list(tokens)) == [text.config_text(t) for t in tokens]

@settings(max_examples=400, deadline=None)
@given(_TOKENS, _TOKENS)
def test_addresses_proved_once_are_proved_as_before(proved: list[str], tokens: list[str]) -> None:
    """:func:`text.quads` gives one answer whatever it passed before (its proved strings are each strict)."""
    text._QUADS.clear()
    unseen = text.quads(tokens)
    text.quads(proved)
    assert text.quads(tokens) == unseen
    assert unseen == all(re.fullmatch(IP, t) for t in tokens)
    assert all(text.quads([t]) for t in text._QUADS)


@settings(max_examples=400, deadline=None)
@given(_TOKENS, _TOKENS)
def test_prefixes_proved_once_are_proved_as_before(proved: list[str], tokens: list[str]) -> None:
    """:func:`text.prefixes` too: what it passed before changes no answer, and each string it keeps is a strict
    quad with ``/31`` or ``/32``, line by line as the address pass reads it."""
    text._PREFIXES.clear()
    unseen = text.prefixes(tokens)
    assert unseen == all(re.fullmatch(rf"{IP}/3[12]", t) for t in tokens)
    text.prefixes(proved)
    assert text.prefixes(tokens) == unseen
    assert all(re.fullmatch(rf"{IP}/3[12]", t) for t in text._PREFIXES)


def _first_indices(keys: list[str]) -> tuple[int, ...] | None:
    """The long way: each key's first index, or None when all differ."""
    found = tuple(keys.index(k) for k in keys)
    return None if found == tuple(range(len(keys))) else found


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(st.sampled_from("aabbcd"), max_size=7), min_size=1, max_size=12), st.booleans())
def test_a_partition_tested_against_the_last_is_the_one_built_afresh(lists: list[list[str]], as_tuple: bool) -> None:
    """:class:`slots._Partition` keeps the last pattern with equalities and tests new keys against it; over runs
    of key lists that share, nearly share or do not share a pattern, each answer is the one built afresh."""
    partition = slots._Partition()
    for keys in lists + [list(reversed(k)) for k in lists] + lists:
        assert partition.of(tuple(keys) if as_tuple else keys) == _first_indices(keys) == slots._pattern(keys)


def test_a_group_signed_last_is_signed_as_a_fresh_proof_signs_it() -> None:
    """One proof signing many edited switches in a row (its last-signature memo in play) signs each as a
    proof that never signed anything."""
    context, fleet = LAB
    for number, (key, values) in enumerate(fleet):
        kept, _ = _proofs(context, key)
        rng = random.Random(500 + number)
        previous = values
        for trial in range(150):
            edited = _edit(rng, previous if trial % 3 else values)
            cfg, _, _, _ = _texts(context, key, edited)
            assert kept.signature(edited, cfg) == _proofs(context, key)[0].signature(edited, cfg), trial
            previous = edited


def _planted(rng: random.Random, values: list[str]) -> list[str]:
    """``fabgen-``, or a piece of it, put at the start, the end or inside one value."""
    values = list(values)
    at = rng.randrange(len(values))
    piece = rng.choice(["fabgen-", "fabgen-0123456789ab", "fab", "gen-", "f", "-", "fabgen"])
    where = rng.choice((0, len(values[at]), rng.randrange(len(values[at]) + 1)))
    values[at] = values[at][:where] + piece + values[at][where:]
    return values


def test_a_planted_session_name_is_found_as_the_text_count_finds_it() -> None:
    """A session's ``fabgen-`` count, read from its values where its shape keeps them apart, refuses exactly
    the edits the count over the whole text refuses; and through the renderer's vouching the check answers
    as the full check does."""
    context, fleet = LAB
    for number, (key, values) in enumerate(fleet):
        cfg_proof, session_proof = _proofs(context, key)
        assert session_proof._apart  # fabgen's own session shape: the shortcut is the one exercised
        whole = _proofs(context, key)[1]
        whole._apart = False
        vouchers = slots.Vouchers()
        rng = random.Random(700 + number)
        refused = 0
        for trial in range(200):
            edited = _planted(rng, values)
            cfg, session, cfg_pieces, session_pieces = _texts(context, key, edited)
            flat = [edited[0], session_name(cfg), *edited]
            signed = session_proof.signature(flat, session)
            assert signed == whole.signature(flat, session), trial
            refused += signed is None and cfg_proof.signature(edited, cfg) is not None
            paths = f"switches/p{number}.cfg", session_path(f"p{number}")
            vouchers.vouch(key, (paths[0], cfg, cfg_pieces, edited),
                           (paths[1], session, session_pieces, [edited[0], session_name(cfg)]))
            assert check.check_eos_config(paths[1], session) == check.full_check(paths[1], session), trial
        assert refused > 5  # planted names are seen, not only vouched past


def test_a_shape_with_a_value_next_to_a_piece_of_the_name_counts_the_whole_text() -> None:
    """``fab`` before a slot, or ``-`` after one, could join a value into a ``fabgen-``: such a shape is not
    apart, and the count runs over the whole text as before."""
    assert slots._apart("a \x000\x00 b\n")
    assert not slots._apart("fab\x000\x00\n")
    assert not slots._apart("\x000\x00-x")
    assert not slots._apart("\x000\x00\x001\x00")
