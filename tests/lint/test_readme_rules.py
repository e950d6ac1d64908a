"""README.md's "Lint rules" table is `fabgen rules --format markdown`, kept in sync.

The table sits between ``<!-- rules:start -->`` and ``<!-- rules:end -->``; when a
rule is added or its summary changes, paste the new output of
:func:`fabgen.lint.rules_markdown` there. No skip: a README without the markers fails.
"""

from __future__ import annotations

from pathlib import Path

from fabgen.lint import rules_markdown

README = Path(__file__).resolve().parents[2] / "README.md"
START, END = "<!-- rules:start -->", "<!-- rules:end -->"


def test_readme_lists_the_lint_rules() -> None:
    text = README.read_text(encoding="utf-8")
    assert START in text and END in text, (
        f"README.md needs a 'Lint rules' section with {START} and {END} around the output of "
        "`fabgen rules --format markdown`")
    body = text.split(START, 1)[1].split(END, 1)[0]
    assert body.strip() == rules_markdown().strip(), (
        "README.md's rules table is out of date; replace it with `fabgen rules --format markdown`")
