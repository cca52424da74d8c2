"""Two-column pages whose upper part is full width (a wide table, figure or example): their columns are found and
read one after the other (tools.ingest.layout.find_gutter, build_lines), not line by line across the gutter; a
one-column page with narrow lines is still one column."""
from __future__ import annotations

import pymupdf
import pytest

from evidex.tools.ingest.layout import TEXT_FLAGS, build_lines, extract_fragments, find_gutter
from tests.tools.pdfgen_helpers import corpus_dir

WORDS = "the model reads each passage of the paper and cites the pages it used for every answer".split()


def _line(n: int, chars: int = 46) -> str:
    out, i = [], n
    while len(" ".join(out)) < chars:
        out.append(WORDS[i % len(WORDS)])
        i += 3
    return " ".join(out)


def _column_line(label: str, n: int) -> str:
    """A column's line: its label, then as many words as fit in 220 points at 9 points (a column's width)."""
    words = [label, *_line(n, 80).split()]
    while pymupdf.get_text_length(" ".join(words), fontsize=9) > 220:
        words.pop()
    return " ".join(words)


def _page(*, two_columns: bool):
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    y = 80
    for r in range(14):  # full width: a wide table's rows and an example's lines, more text than the columns below
        page.insert_text((80, y), "  ".join(f"{_line(r + c, 14)}" for c in range(5)), fontsize=9)
        y += 12
    y += 20
    for k in range(14):
        if two_columns:
            page.insert_text((70, y), _column_line(f"L{k:02d}", k), fontsize=9)
            page.insert_text((306, y), _column_line(f"R{k:02d}", k + 7), fontsize=9)
        else:
            page.insert_text((70, y), f"L{k:02d} " + _line(k, 95), fontsize=9)
            if k % 4 == 3:  # a paragraph's last line, and a short centred line
                y += 12
                page.insert_text((70, y), _line(k, 30), fontsize=9)
                page.insert_text((250, y + 12), _line(k, 20), fontsize=9)
                y += 12
        y += 12
    return doc


def _lines(doc, number: int = 0):
    """The page's gutter and its lines in reading order."""
    page = doc[number]
    frags = extract_fragments(page.get_text("dict", flags=TEXT_FLAGS))
    gutter = find_gutter(frags, page.rect.width)
    return gutter, build_lines(frags, number + 1, gutter)


def _read(doc, number: int = 0):
    gutter, lines = _lines(doc, number)
    return gutter, [ln.text for ln in lines]


def test_two_columns_under_a_full_width_part_are_read_one_after_the_other():
    gutter, lines = _read(_page(two_columns=True))
    assert gutter is not None and 290 <= gutter <= 306
    starts = [t[:3] for t in lines if t[:1] in "LR" and t[1:3].isdigit()]
    # the left column's 14 lines, then the right column's, each its own line (before: "L00 ... R00 ..." lines)
    assert starts == [f"L{k:02d}" for k in range(14)] + [f"R{k:02d}" for k in range(14)]
    assert not any("R0" in t for t in lines if t.startswith("L"))


def test_a_one_column_page_with_a_wide_part_and_short_lines_stays_one_column():
    gutter, lines = _read(_page(two_columns=False))
    assert gutter is None
    assert [t[:3] for t in lines if t[:1] == "L" and t[1:3].isdigit()] == [f"L{k:02d}" for k in range(14)]


def test_a_real_appendix_page_under_a_wide_table_reads_its_columns_in_order():
    """longeval's page 8: a full-width table over two columns of text; each line before was half of a left line
    and half of a right one."""
    corpus = corpus_dir()
    path = corpus / "pdfs" / "longeval-human-eval-faithfulness-summarization.pdf" if corpus else None
    if path is None or not path.exists():
        pytest.skip("shared corpus not found")
    with pymupdf.open(path) as doc:
        gutter, built = _lines(doc, 7)
    assert gutter is not None and 290 <= gutter <= 306
    # no line of the text under the table runs across the gutter any more
    body = [ln for ln in built if ln.col != -1 and ln.y0 > 400]
    assert len(body) >= 20 and all(ln.x1 <= gutter + 1 or ln.x0 >= gutter - 1 for ln in body)


def test_a_line_end_hyphen_joins_as_the_word_prints():
    """A lower-case word broken at a line end is joined ("represen-" + "tation"); a hyphen that belongs to the word
    stays with no space after it, so a name reads as printed ("DSTC7-AVSD", not "DSTC7- AVSD", which neither a
    question's word nor an exact-match answer matches: 520 such breaks in the 6,420 pool passages); a suspended
    hyphen keeps its space."""
    from evidex.tools.ingest.layout import join_lines

    cases = {("represen-", "tation of"): "representation of",
             ("Cross-", "Layer Gradient"): "Cross-Layer Gradient",
             ("the DSTC7-", "AVSD dataset"): "the DSTC7-AVSD dataset",
             ("T5-", "3B"): "T5-3B", ("pages 1843-", "1861"): "pages 1843-1861", ("a 5-", "fold split"): "a 5-fold split",
             ("state-of-the-", "art results"): "state-of-the-art results",
             ("mid-", "and high-resource"): "mid- and high-resource", ("drops by -", "5%"): "drops by - 5%"}
    for lines, joined in cases.items():
        assert join_lines(list(lines)) == joined, lines
