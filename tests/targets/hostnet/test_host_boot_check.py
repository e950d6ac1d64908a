"""host-boot's line check by plain string tests accepts and refuses exactly what its regular expressions did."""

from __future__ import annotations

import random
import re

import pytest

from fabgen.errors import Problem
from fabgen.pipeline import load_spec, plan_fabric, render_fabric
from fabgen.targets.hostnet import boot
from fabgen.targets.hostnet.boot import boot_problems
from tests.helpers import example

# The rules as they were written before (fabgen/targets/hostnet/boot.py), kept here as the reference.
_UNIT_LINE = re.compile(r"^(?:\[(Unit|Service|Install)\]|(Description|Wants|After|Before|Type|RemainAfterExit|ExecStart|"
                        r"WantedBy)=([^\s].*))$")
_UDEV_LINE = re.compile(r'^ACTION=="add", SUBSYSTEM=="net", DRIVERS=="mlx5_core", '
                        r'RUN\+="/usr/bin/systemctl --no-block restart fabgen-roce-nic\.service"$')
_LLDPD_LINE = re.compile(r"^configure (?:system interface pattern [A-Za-z0-9_.,-]{1,1000}|lldp portidsubtype ifname)$")


def _reference(path: str, text: str) -> list[Problem]:
    pattern = (_UNIT_LINE if path.endswith(".service") else _UDEV_LINE if path.endswith(".rules") else _LLDPD_LINE)
    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line or line.startswith("#"):
            continue
        if not pattern.match(line) or line.endswith("\\") or ("%" in line and path.endswith(".service")):
            problems.append(Problem(f"unexpected line {line!r}", file=path, line=number))
    return problems


_PATHS = ("p/fabgen-roce-nic.service", "p/99-fabgen-roce-nic.rules", "p/lldpd.conf")
_NOISE = ["=", "%", "\\", " ", "\t", "\xa0", "\u2003", "\x0b", "\r", "\n", "[", "]", "#", "a", "Z", "9", "_", ".", ",",
          "-", "/", '"', "+", "é", "\x00", "\u2028"]


def _generated() -> dict[str, str]:
    return render_fabric(plan_fabric(load_spec(example("lab"))), targets=["host-boot"])


def _mutants(line: str, rng: random.Random) -> list[str]:
    """The line with a character changed, inserted or removed, cut short, or doubled."""
    out = [line[:cut] for cut in range(0, len(line) + 1, max(1, len(line) // 6))] + [line + line, line + "\\"]
    for _ in range(12):
        at = rng.randrange(len(line) + 1)
        noise = rng.choice(_NOISE)
        out += [line[:at] + noise + line[at:], line[:at] + noise + line[at + 1:], line[:at] + line[at + 1:]]
    return out


def test_generated_files_pass_both_and_by_the_whole_text_proof() -> None:
    files = _generated()
    for path, text in files.items():
        assert boot_problems(path, text) == _reference(path, text) == []
        whole = (boot._UNIT_PROOFS if path.endswith(".service") else boot._UDEV_PROOFS if path.endswith(".rules")
                 else boot._LLDPD_PROOFS)[1]
        assert whole.fullmatch(text), path  # the fast path is the one a generated file takes
    assert len(files) == 3


def test_planted_and_random_lines_agree_with_the_regular_expressions() -> None:
    rng = random.Random(17)
    seeds = [line for text in _generated().values() for line in text.splitlines()]
    seeds += ["[Unit]", "[Install]", "[unit]", "Wants= x", "Wants=\xa0x", "Wants=", "WantsX=y", "Type==x", "=x",
              "configure system interface pattern " + "a" * 1000, "configure system interface pattern " + "a" * 1001,
              "configure system interface pattern ", "configure lldp portidsubtype ifname ", "ExecStart=%h/x",
              "Description=a\\", "Wants=x\x85y", "After=\u2028x", "Before=\x1cx"]
    lines = [mutant for seed in seeds for mutant in _mutants(seed, rng)] + seeds
    lines += ["".join(rng.choice(_NOISE) for _ in range(rng.randrange(1, 8))) for _ in range(300)]
    refused = 0
    for path in _PATHS:
        for line in lines:
            text = f"# head\n{line}\n\n"
            found = boot_problems(path, text)
            assert found == _reference(path, text), (path, line)
            refused += bool(found)
        text = "\n".join(lines)
        assert boot_problems(path, text) == _reference(path, text)
    assert 500 < refused < 3 * len(lines) - 30  # both kinds of answer were exercised, for every kind of file


def test_random_files_agree_with_the_regular_expressions() -> None:
    """Files of a few lines, most of them good ones: the whole-text proof decides, or the per-line tests do."""
    rng = random.Random(3)
    generated = [line for text in _generated().values() for line in text.splitlines()]
    pool = generated + [mutant for seed in generated for mutant in _mutants(seed, rng)][:400]
    accepted = {path: 0 for path in _PATHS}
    for _ in range(1500):
        picked = [rng.choice(generated) if rng.random() < 0.8 else rng.choice(pool) for _ in range(rng.randrange(1, 6))]
        text = rng.choice(["\n", "\r\n", "\n\n"]).join(picked) + rng.choice(["", "\n"])
        for path in _PATHS:
            found = boot_problems(path, text)
            assert found == _reference(path, text), (path, text)
            accepted[path] += not found
    assert all(count > 50 for count in accepted.values()), accepted


@pytest.mark.parametrize("path", _PATHS)
def test_an_unknown_line_is_located(path: str) -> None:
    assert [(p.line, p.file) for p in boot_problems(path, "# ok\n\nExecStartPre=/bin/rm -rf /\n")] == [(3, path)]


def test_both_lldpd_pattern_tests_admit_the_same_characters() -> None:
    """The whole-text proof and the per-line test of a pattern line agree on every code point: the proof's character
    class is derived from ``_PATTERN_CHARS``, and an edit to either spelling alone fails here."""
    head = "configure system interface pattern eth0,"
    by_proof = {chr(c) for c in range(0x110000) if boot._LLDPD_PROOFS[1].fullmatch(f"{head}{chr(c)}x\n")}
    by_line = {chr(c) for c in range(0x110000) if boot._lldpd_line(f"{head}{chr(c)}x")}
    assert by_proof == by_line == set(boot._PATTERN_CHARS)
    assert len(boot._PATTERN_CHARS) == 66


def test_the_plain_proofs_agree_with_the_full_ones_on_every_plain_text() -> None:
    """A plain text (:func:`boot._plain`) is judged by the short-class proofs; on each such text of the planted and
    random corpus they give the full proofs' verdict, both ways, for every kind of file."""
    rng = random.Random(29)
    seeds = [line for text in _generated().values() for line in text.splitlines()]
    seeds += ["Wants= x", "Wants=", "ExecStart=x ", "Description=a\\", "ExecStart=%h/x", "# 100% \\ é", "After=\x1fx"]
    lines = [mutant for seed in seeds for mutant in _mutants(seed, rng)] + seeds
    pairs = [boot._UNIT_PROOFS, boot._UDEV_PROOFS, boot._LLDPD_PROOFS]
    verdicts: dict[bool, int] = {True: 0, False: 0}
    not_plain = 0
    for line in lines:
        text = f"# head\n{line}\n"
        if not boot._plain(text):
            not_plain += 1
            continue
        for plain, full in pairs:
            verdict = bool(full.fullmatch(text))
            assert bool(plain.fullmatch(text)) == verdict, (plain.pattern[:40], line)
            verdicts[verdict] += 1
    assert verdicts[True] > 100 and verdicts[False] > 1000 and not_plain > 100, (verdicts, not_plain)


@pytest.mark.parametrize("comment", ["# 100% sure", "# a \\ b", "# caf\u00e9", "# x\xa0y"])
def test_a_comment_that_is_not_plain_passes_by_the_full_proof(comment: str) -> None:
    for path, text in _generated().items():
        odd = f"{comment}\n{text}"
        assert not boot._plain(odd) and boot_problems(path, odd) == _reference(path, odd) == [], path
