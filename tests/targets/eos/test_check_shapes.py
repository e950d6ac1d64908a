"""The EOS checker's fast path (memoised lines, compiled shapes) answers exactly as the full matcher does.

The fast path exists so that checking 2,048 configs is cheap; these tests make
sure it never makes the check weaker: a bad line planted in one config of many
is still found at its line, with the message the full matcher gives, and every
line of real output gets the same (form, values, error) either way.
"""

from __future__ import annotations

import re

import pytest
from conftest import EXAMPLES

import fabgen.targets.eos.syntax as syntax
from fabgen.pipeline import load_spec, plan_fabric, render_fabric

GOLDEN_SWITCH = EXAMPLES.parent / "tests" / "golden" / "lab" / "switches" / "leaf-r0-p00-01.cfg"


def _fleet(count: int) -> list[str]:
    """``count`` distinct configs made from one real one: each its own hostname, addresses and descriptions."""
    base = GOLDEN_SWITCH.read_text()
    fleet = []
    for n in range(count):
        text = base.replace("leaf-r0-p00-01", f"leaf-r{n % 8}-p{n // 8:02d}-01")
        # every interface and neighbour address gets a third octet of its own (still a valid /31 peer pair)
        text = re.sub(r"\b10\.(\d+)\.(\d+)\.(\d+)", lambda m, n=n: f"10.{m[1]}.{(int(m[2]) + n) % 256}.{m[3]}", text)
        fleet.append(text)
    return fleet


PLANTED = [
    ("   mtu 9214", "   mtu 9215", "mtu 9215 is out of range 68-9214"),
    ("   no shutdown", "   no shutdwn", "expected 'shutdown', found 'shutdwn'"),
    ("   speed 400g-8", "   speed 400g-3", "speed must look like 400g-8 or 100g, not '400g-3'"),
    ("   service-profile FABGEN-QOS", "   service-profile FABGEN-QOS-X",
     "service-profile FABGEN-QOS-X: no 'qos profile FABGEN-QOS-X' in this configuration"),
]


@pytest.mark.parametrize(("good", "bad", "message"), PLANTED, ids=[p[1].strip() for p in PLANTED])
def test_a_bad_line_in_one_of_2048_configs_is_still_found(good: str, bad: str, message: str) -> None:
    fleet = _fleet(2048)
    victim = 1377
    lines = fleet[victim].split("\n")
    at = next(i for i, line in enumerate(lines) if line == good or line.startswith(good + " "))
    lines[at] = lines[at].replace(good, bad, 1)
    fleet[victim] = "\n".join(lines)
    verdicts = [syntax.check_text(text) for text in fleet]  # the good lines before and after warm every memo
    assert [n for n, issues in enumerate(verdicts) if issues] == [victim]
    assert [(i.line, i.message) for i in verdicts[victim]] == [(at + 1, message)]


def test_a_bad_address_after_thousands_of_good_ones() -> None:
    """Addresses are the lines that differ in every config: an octet above 255 and an AS 0 are each caught."""
    fleet = _fleet(2048)
    syntax.check_text(fleet[0])
    text = re.sub(r"ip address 10\.(\d+)\.(\d+)\.(\d+)/31", "ip address 10.\\1.\\2.256/31", fleet[2047], count=1)
    issues = syntax.check_text(text)
    assert len(issues) == 1 and "has an octet above 255" in issues[0].message
    text = re.sub(r"   neighbor (\S+) remote-as \d+", "   neighbor \\1 remote-as 0", fleet[2046], count=1)
    issues = syntax.check_text(text)
    assert issues[0].message == "AS number 0 is out of range 1-4294967295"
    assert all("has no 'remote-as'" in i.message for i in issues[1:])  # the refused line defines no peer


def test_fast_path_agrees_with_the_full_matcher_on_real_and_mutated_lines() -> None:
    """Every line of the lab's EOS output, and digit/word mutations of it, get the full matcher's answer."""
    files = render_fabric(plan_fabric(load_spec(EXAMPLES / "lab" / "spec.yaml")), ["eos"])
    checked = 0
    for text in (text for path, text in files.items() if path.endswith(".cfg")):  # a .session's prologue is not config
        mode_of: dict[int, str] = {0: "global"}
        for raw in text.splitlines():
            body = raw.lstrip(" ")
            depth = (len(raw) - len(body)) // syntax.INDENT
            if body.startswith("!"):
                continue
            mode = mode_of[depth]
            variants = {body, re.sub(r"\d+", "999999", body), re.sub(r"\d", "0", body),
                        body + " extra", body.replace(" ", "  ", 1), body.rsplit(" ", 1)[0]}
            for variant in variants:
                syntax._ACCEPTED[mode].clear()
                assert syntax._match_fast(variant, mode) == syntax._match_line(variant, mode), (mode, variant)
                assert syntax._match_fast(variant, mode) == syntax._match_line(variant, mode), (mode, variant)
                checked += 1
            form = syntax._match_line(body, mode)[0]
            assert form is not None
            if form.enters:
                mode_of[depth + 1] = form.enters
    assert checked > 200


def test_every_shape_is_disjoint_from_the_forms_before_it() -> None:
    """The premise of the fast path: a shape is only compiled when no earlier form of its group can match its lines."""
    for mode, groups in syntax._SHAPES.items():
        for word, shapes in groups.items():
            forms = syntax._BY_FIRST_WORD[mode][word]
            for shape in shapes:
                earlier = forms[:forms.index(shape.form)]
                assert all(syntax._disjoint(f, shape.form) for f in earlier), (mode, shape.form.spec)
    assert syntax._SHAPES["interface"]["ip"], "the per-port address line must have a fast shape"
    assert syntax._SHAPES["router-bgp"]["neighbor"], "the neighbour lines must have fast shapes"


@pytest.mark.parametrize(("after", "extra", "message"), [
    ("   no shutdown", "   no shutdown", "'no shutdown' repeats line"),
    ("   service-profile FABGEN-QOS", "   ip address 10.99.0.1/31", "has more than one primary address"),
    ("   service-profile FABGEN-QOS", "   shutdown", None),
])
def test_a_line_added_to_a_learnt_block_is_still_checked(after: str, extra: str, message: str | None) -> None:
    """A block matching a learnt interface shape and then going on: the extra line meets the per-line walk
    and the block rules, which see every line of the block."""
    fleet = _fleet(64)
    for text in fleet[:32]:
        assert syntax.check_text(text) == []
    lines = fleet[40].split("\n")
    at = lines.index(after) + 1
    lines.insert(at, extra)
    issues = syntax.check_text("\n".join(lines))
    if message is None:  # 'shutdown' beside 'no shutdown' is no rule of the checker: not an error, and not lost
        assert issues == []
    else:
        assert [i.line for i in issues] == [at + 1] and message in issues[0].message


# Bad values in the positions the strict per-type regexes (syntax.STRICT) validate inside the shape match: the
# per-port tokens. The victim's third octet is 1377 % 256 = 97 (see _fleet).
PLANTED_STRICT = [
    (r"(   ip address 10\.10\.97\.0)/31", r"\1/30", "10.10.97.0/30 is the network or broadcast address of its /30"),
    (r"(   ip address 10\.10\.97\.)0/31", r"\g<1>300/31", "'10.10.97.300/31' has an octet above 255"),
    (r"(   ip address 10\.10\.)97(\.0/31)", r"\g<1>097\2",
     "'10.10.097.0/31' is not an IPv4 address/prefix written canonically (a.b.c.d/len)"),
    (r"(   ip address 10\.10\.97\.0)/31", r"\1/33",
     "'10.10.97.0/33' is not an IPv4 address/prefix written canonically (a.b.c.d/len)"),
    (r"(   description lab01):", r"\1?", "'?' asks the EOS CLI for help instead of being stored"),
    (r"(   description )lab01", "\\1" + "x" * 236, "text is 244 characters; EOS keeps at most 240"),
    (r"(   neighbor 10\.10\.97\.)32( description)", r"\g<1>256\2", "'10.10.97.256' is not an IPv4 address"),
    (r"(      network 10\.10\.97\.)0/31", r"\g<1>1/31", "10.10.97.1/31 has host bits set; a network prefix ends "
                                                        "where its length says"),
    (r"(      network 10\.255\.97\.1)/32", r"\1/31", "10.255.97.1/31 has host bits set; a network prefix ends "
                                                     "where its length says"),
    (r"(   router-id 10\.255\.97\.)1", r"\g<1>256", "'10.255.97.256' is not an IPv4 address"),
]


@pytest.mark.parametrize(("find", "replace", "message"), PLANTED_STRICT, ids=[p[2][:40] for p in PLANTED_STRICT])
def test_a_bad_value_in_a_strictly_matched_position_is_still_found(find: str, replace: str, message: str) -> None:
    """Thousands of configs teach the block and line shapes first; then one value they abstract is wrong."""
    fleet = _fleet(2048)
    victim = 1377
    lines = fleet[victim].split("\n")
    at = next(i for i, line in enumerate(lines) if re.fullmatch(find + ".*", line))
    lines[at] = re.sub(find, replace, lines[at], count=1)
    fleet[victim] = "\n".join(lines)
    verdicts = [syntax.check_text(text) for text in fleet]
    assert [n for n, issues in enumerate(verdicts) if issues] == [victim]
    body = lines[at].lstrip(" ")
    assert [(i.line, i.col, i.message) for i in verdicts[victim]] == [(at + 1, len(lines[at]) - len(body) + 1,
                                                                         message)]


def _tokens() -> dict[str, list[str]]:
    """Candidates around every edge of the STRICT subsets: octets 0-999 and leading zeros, every prefix length,
    odd and even last octets, texts at the length limit, with '?', empty."""
    octets = [str(n) for n in range(1000)] + ["00", "01", "007", "-1", "", "1a"]
    ips = [f"10.{o}.0.1" for o in octets] + [f"{o}.0.0.0" for o in octets] + [f"1.2.3.{o}" for o in octets]
    ips += ["1.2.3", "1.2.3.4.5", "1..2.3", "1.2.3.4 "]
    cidrs = [f"{ip}/{n}" for ip in [*ips[::7], "10.0.0.0", "10.0.0.1", "10.0.0.2", "10.0.0.255", "0.0.0.0"]
             for n in [*range(0, 34), "031", "", "3a"]]
    cidrs += [f"1.2.3.{o}/{n}" for o in octets for n in (30, 31, 32)]
    texts = ["", "x", "x" * 240, "x" * 241, "a?b", "?", "with spaces", "two  spaces", "x" * 239 + "?"]
    return {"ip": ips, "address": cidrs, "prefix": cidrs, "text": texts}


def test_strict_patterns_accept_nothing_their_validator_refuses() -> None:
    """The premise of STRICT: a token its regex accepts is one TYPES accepts, so no validator call is skipped
    wrongly; and the tokens fabgen writes on every port do fall in it (else the regexes would be useless)."""
    assert set(syntax.STRICT) == set(_tokens())
    accepted = 0
    for kind, tokens in _tokens().items():
        strict = re.compile(syntax.STRICT[kind])
        for token in tokens:
            if strict.fullmatch(token):
                accepted += 1
                assert syntax.TYPES[kind](token) is None, (kind, token)
    assert accepted > 1500
    for kind, token in [("ip", "10.0.0.64"), ("address", "10.0.0.0/31"), ("address", "10.254.0.1/32"),
                        ("prefix", "10.0.0.62/31"), ("prefix", "10.254.0.1/32"), ("text", "gt00001:ens8np0")]:
        assert re.fullmatch(syntax.STRICT[kind], token), (kind, token)
