"""CSV text for the tabular exports at the cost of a join, with the csv module's exact bytes.

Why not ``csv.writer`` for every file: at 24k hosts the NetBox files are 370k
rows, and the writer (with reading them back to check them) was most of the
target's time. Almost every cell fabgen writes is a spec name or a number, so
the rows are joined with commas first and the result kept only when no cell
needed quoting; otherwise the same rows go through ``csv.writer``.

How "no cell needed quoting" is decided without looking at each cell: the
*skeleton* of a text (its bytes with everything but ``,``, ``\\n``, ``"`` and
``\\r`` deleted, one C pass) of R rows of C columns joined plainly is exactly
``(C - 1) commas + newline`` R times when no cell holds one of those four
characters; given that every row has C cells and the text R newlines, it differs
when any cell does (an extra comma, or a quote or carriage return kept). Those
four are what makes :func:`csv_text` quote a field (the first three make
Python's ``QUOTE_MINIMAL`` do it; a carriage return it would leave bare, see
:func:`csv_text`), so an equal skeleton means the join *is* the output. The same
skeleton, taken of a text someone hands the output check, proves every line has
the header's width, with no quoted field to parse.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b',\n"\r')


def plain_shape(text: str, columns: int) -> bool:
    """True when ``text`` is lines of exactly ``columns`` fields, each ending in a newline, and nothing quoted.

    False says only "parse it to know" (always for one column, where a line's width shows no comma).
    """
    if columns < 2 or not text.endswith("\n"):  # an empty line or an unended last one: no comma to miss
        return False
    skeleton = text.encode("utf-8", "surrogatepass").translate(None, _NOT_STRUCTURE)
    return skeleton == (b"," * (columns - 1) + b"\n") * skeleton.count(b"\n")


def joined_plain(text: str, columns: int, lines: int) -> bool:
    """``text``, made by its caller as ``lines`` rows of exactly ``columns`` cells each joined by commas and
    ended by a newline, is the csv writer's output: no cell held a comma, newline, quote or carriage return.

    Why counting is enough: the joins put exactly ``columns - 1`` commas and one
    newline in each row, so a cell's comma or newline shows as one too many in
    the text's totals, and a quote or carriage return anywhere is a cell's
    (four C scans, a third of :func:`plain_shape`'s encode and translate over
    the whole text). The caller's construction is the premise: a row built with
    a cell too few and one holding a comma would pass, so rows of unknown width
    must be measured first, as :func:`csv_text` does. One column is refused, as
    in :func:`plain_shape` (the writer quotes a row of one empty cell).
    """
    return (columns >= 2 and text.count("\n") == lines and text.count(",") == (columns - 1) * lines
            and '"' not in text and "\r" not in text)


def csv_text(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """The bytes ``csv.writer(lineterminator="\\n")`` writes for a header and rows of strings, by a join when it can.

    One exception, so that the file reads back as the rows it was made of: a row
    with a carriage return in a cell has all its cells quoted.
    """
    text = "\n".join([",".join(columns), *map(",".join, rows)]) + "\n"
    # A cell's comma can pass for the separator of a missing cell, so every row must be the header's width.
    if set(map(len, rows)) <= {len(columns)} and joined_plain(text, len(columns), len(rows) + 1):
        return text
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    # The writer leaves a bare carriage return unquoted when lines end in "\n", and every reader then splits
    # the row there; a row holding one is written with every cell quoted, which reads back as written.
    carriage = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_ALL)
    for row in (columns, *rows):
        (carriage if any("\r" in cell for cell in row) else writer).writerow(row)
    return out.getvalue()
