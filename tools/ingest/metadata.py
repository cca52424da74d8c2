"""Paper metadata: title/authors/abstract from page 1, AirQA metadata JSON overrides, and the AirQA paper UUID.

AirQA paper UUID (neusym.md §5): ``uuid5(NAMESPACE_DNS, f"{norm_title}-{conference_year}")`` where
``norm_title`` keeps only ``[a-z0-9]`` of the lower-cased title. We NFKC-normalise first so ligatures and
full-width characters from PDF text ("ﬁ" -> "fi") give the same id as the clean title.
"""
from __future__ import annotations

import json
import re
import unicodedata
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from evidex.tools.ingest.layout import Line, PageLayout, join_lines, run_bold, run_size, run_text
from evidex.tools.ingest.records import PaperMetadata
from evidex.tools.text import AFFILIATION_SYMBOLS, GREEK_MARKS, NOTE_MARKS

CONF_YEAR_RE = re.compile(r"^[a-z\d]+$")
AFFILIATION_RE = re.compile(
    r"(universit|institut|department|dept\.|school|college|laborator|\blab\b|research|center|centre|academy|"
    r"inc\.|corp|ltd|google|microsoft|meta\b|facebook|amazon|deepmind|openai|ibm|nvidia|alibaba|tencent|baidu|"
    r"huawei|samsung|@|\.com|\.edu|\.org|email|e-mail|http|www\.|avenue|street|road|germany|china|usa|france|"
    r"japan|korea|canada|india|iran|italy|spain|netherlands|kingdom|switzerland|israel|australia|singapore|"
    r"equal contribution|corresponding|proceedings|conference|workshop|preprint|arxiv|published)",
    re.I,
)
NAME_PARTICLES = {"de", "van", "von", "der", "den", "da", "di", "del", "la", "le", "du", "bin", "al", "y", "dos", "das"}


def normalize_title(title: str) -> str:
    return re.sub(r"[^a-z\d]", "", unicodedata.normalize("NFKC", title).lower())


def airqa_paper_uuid(title: str, conference_year: str = "uncategorized") -> str:
    cy = (conference_year or "uncategorized").lower()
    if not CONF_YEAR_RE.match(cy):
        raise ValueError(f"conference_year must match ^[a-z0-9]+$ (e.g. acl2023, arxiv2024), got {conference_year!r}")
    return str(uuid.uuid5(uuid.NAMESPACE_DNS, f"{normalize_title(title)}-{cy}"))


# ------------------------------------------------------------------------------------------------ parsing


def parse_title_authors(pages: list[PageLayout], body_size: float, pdf_title: str = "") -> tuple[str, list[str]]:
    """Title (largest type near the top of page 1) and authors (name-like lines under it). Marks the title
    lines so heading detection skips them; run this before headings, and ``parse_abstract`` after."""
    if not pages:
        return "", []
    first = pages[0]
    title_lines = _title_lines(first, body_size)
    title = join_lines([ln.text for ln in title_lines]) if title_lines else ""
    words = re.findall(r"[^\W\d_]+", title)
    if len(title.split()) < 2 or sum(len(w) for w in words) < 8:  # OCR noise or a lone big letter is no title
        title, title_lines = "", []
    if not title and _usable_pdf_title(pdf_title):
        title = pdf_title.strip()
    for ln in title_lines:
        ln.kind = "title"
    return _clean(title), _authors(first, title_lines)


def parse_abstract(pages: list[PageLayout]) -> str:
    return _abstract([ln for p in pages[:2] for ln in p.lines])


def _clean(s: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", s)).strip()


def _usable_pdf_title(t: str) -> bool:
    t = (t or "").strip()
    return len(t.split()) >= 3 and not re.search(r"(untitled|microsoft word|\.docx?|\.pdf|\.tex)", t, re.I)


def _title_lines(page: PageLayout, body_size: float) -> list[Line]:
    cands = [
        ln
        for ln in page.lines
        if ln.kind in ("text", "heading")
        and ln.y0 < 0.5 * page.height
        and sum(c.isalpha() for c in ln.text) >= 3
        and ln.top_size >= body_size + 1.5  # its largest words: a line with small capitals is the title's too
        and not re.match(r"^(arxiv|preprint|published|proceedings|under review|accepted)", ln.text.strip(), re.I)
    ]
    if not cands:
        return []
    top = max(round(ln.top_size * 2) / 2 for ln in cands)
    start = min((ln for ln in cands if ln.top_size >= top - 0.6), key=lambda ln: (ln.y0, ln.x0))
    title_size, picked = start.top_size, [start]
    for ln in sorted((c for c in cands if c.y0 > start.y0), key=lambda c: c.y0):
        prev = picked[-1]
        if abs(ln.top_size - title_size) <= 0.8 and ln.y0 - prev.y1 <= 1.0 * ln.size:
            picked.append(ln)
        elif ln.y0 - prev.y1 > 1.0 * ln.size:
            break
    # same-baseline pieces (title split by a wide gap) are already one line; keep reading order by y
    return sorted(picked, key=lambda ln: (ln.y0, ln.x0))


# marks that follow a name: affiliation numbers and symbols, and Greek letters used as marks ("Lo\u03b1", "Levy\u03c4\u00b5")
_MARKS = rf"\d,{NOTE_MARKS}{AFFILIATION_SYMBOLS}{GREEK_MARKS}"
# marks glued between two names ("Fayyaz3*Ehsan", "Pieler1 2 Jonathan", "Ann Bee\u2662 Cy Dee") separate two authors
_BETWEEN_NAMES = re.compile(rf"(?<=[a-z.])[{_MARKS}]+(?:\s[{_MARKS}]+)*(?=\s*[A-Z])")
# an affiliation line starts with its mark: "1Columbia University", "\u2020 The Allen Institute", "\u03c4 Tel Aviv", "aApple"
_LEADING_MARK = re.compile(rf"^\s*(?:[{_MARKS}\u2020]+\s*|[a-z](?=[A-Z]))(?=[A-Z])")
# a spacing accent before its letter, as TeX fonts extract it ("Marasovi\u00b4c", "Ond\u02c7rej"): the letter with the accent
_SPACING_ACCENTS = {"\u00b4": "\u0301", "`": "\u0300", "\u00a8": "\u0308", "\u02c6": "\u0302", "\u02dc": "\u0303", "\u02c7": "\u030c",
                    "\u00b8": "\u0327", "\u02da": "\u030a"}
_ACCENTED = re.compile(r"([\u00b4`\u00a8\u02c6\u02dc\u02c7\u00b8\u02da])\s?([A-Za-z])")


def _author_block(page: PageLayout, title_lines: list[Line]) -> Iterator[Line]:
    """The lines under the title, top to bottom, up to the abstract or the first heading (at most 60% down the
    page), until running text; none without a title."""
    if not title_lines:
        return
    bottom = max(ln.y1 for ln in title_lines)
    stop = page.height * 0.6
    for ln in page.lines:
        low = ln.text.strip().lower()
        if ln.y0 > bottom and (low.startswith("abstract") or ln.kind == "heading"):
            stop = min(stop, ln.y0)
    for ln in sorted(page.lines, key=lambda x: (x.y0, x.x0)):
        # a line is under the title when its middle is (the boxes of the title's last line and the names overlap)
        if (ln.y0 + ln.y1) / 2 <= bottom or ln.y0 >= stop or ln.kind in ("furniture", "title"):
            continue
        if len(ln.text.split()) > 24:
            return  # running text
        yield ln


def _authors(page: PageLayout, title_lines: list[Line]) -> list[str]:
    """Name-like runs of the lines between the title and the abstract. The first run that gives a name sets the
    names' type: when it is bold, a later run that is not is an affiliation ("UNC Chapel Hill" under the bold
    names), and a run in smaller type is an affiliation, an e-mail or a figure's text. A run that starts with a mark
    is an affiliation ("2FAR AI")."""
    names: list[str] = []
    first: tuple[float, bool] | None = None  # the size and boldness of the first run that gave a name
    for ln in _author_block(page, title_lines):
        for frags in ln.frag_groups:  # runs apart on the line: names, or a name beside its e-mail
            part = run_text(frags)
            size, bold = run_size(frags), run_bold(frags)
            if first is not None and (size < 0.85 * first[0] or (first[1] and not bold)):
                continue
            marked = _marks_as_dagger(part)
            if AFFILIATION_RE.search(part) or _LEADING_MARK.match(marked):
                continue
            for name in _run_names(marked):
                if name not in names:
                    names.append(name)
                    first = first or (size, bold)
    return names[:40]


def _run_names(marked: str) -> list[str]:
    """The names a run of the author block gives (``marked``: its text with marks as daggers), in order: split at
    commas, "and", wide gaps and the marks glued between two names, each cleaned (:func:`_clean_name`)."""
    return [name for cand in re.split(r",|;|\band\b|&|\s{2,}|·|•", _BETWEEN_NAMES.sub(", ", marked))
            if (name := _clean_name(cand))]


_CONTACT = re.compile(r"\S+@\S+|https?://|^\s*[{<]")
# an affiliation that still carries a mark ("China1", "NAVER†", ", bIBM Research"): the page marks who is where,
# and position does not say it
_MARKED_PLACE = re.compile(rf"[{NOTE_MARKS}{AFFILIATION_SYMBOLS}\x80-\x9f]|(?<=[^\W\d_])\d\b"
                           r"|(?:^|,\s*)[a-h](?=[A-Z][a-z])|^[^\w(\"“']")


def layout_affiliations(page: PageLayout, body_size: float, authors: list[str]) -> dict[str, list[str]]:
    """Each author's affiliations as a page prints them without marks: under the name, in its column ("Ann Bee
    Cy Dee" over "Univ A   Lab B"). A run between the title and the abstract that names no author is an
    affiliation of the nearest run of names above it that it overlaps horizontally (the most, of several on one
    row); e-mails and links are none. Authors with nothing printed under them are left out, so are names the
    ``authors`` list does not hold; {} when no run names an author, or an affiliation carries a mark (the page
    marks who is where, and the marks could not be read: position would mislead)."""
    if not authors:
        return {}
    named: list[tuple[float, float, float, list[str]]] = []  # a run of names: x0, x1, its middle's height, the names
    found: dict[str, list[str]] = {}
    for ln in _author_block(page, _title_lines(page, body_size)):
        for frags in ln.frag_groups:
            part, x0, x1 = run_text(frags), min(f.x0 for f in frags), max(f.x1 for f in frags)
            names = [n for n in _run_names(_marks_as_dagger(part)) if n in authors]
            if names and not AFFILIATION_RE.search(part):
                named.append((x0, x1, (ln.y0 + ln.y1) / 2, names))
                continue
            text = " ".join(_LEADING_MARK.sub("", part).split()).strip(" ,;")
            above = [(y, min(x1, b) - max(x0, a), ns) for a, b, y, ns in named
                     if y < (ln.y0 + ln.y1) / 2 - 2 and min(x1, b) > max(x0, a)]  # boxes of two rows overlap
            if not text or _CONTACT.search(text) or not above:
                continue
            nearest = max(y for y, _, _ in above)  # the row of names right above (one row's boxes differ a little)
            _, _, owners = max((r for r in above if r[0] >= nearest - 3), key=lambda r: r[1])
            for n in owners:
                if text not in found.setdefault(n, []):
                    found[n].append(text)
    if any(_MARKED_PLACE.search(place) for places in found.values() for place in places):
        return {}
    return {a: found[a] for a in authors if a in found}


def _marks_as_dagger(s: str) -> str:
    """Affiliation marks are any symbol a font offers (♢ ♡ ◦ ▲ ◁ ⋄ ...), not a fixed list: every character of
    Unicode's symbol categories (So, Sm) reads as a dagger, which the name rules treat as a mark. A spacing accent
    before a letter joins it first ("Marasovi´c" -> "Marasović")."""
    s = unicodedata.normalize("NFC", _ACCENTED.sub(lambda m: m.group(2) + _SPACING_ACCENTS[m.group(1)], s))
    s = unicodedata.normalize("NFKC", s)
    return "".join("†" if unicodedata.category(c) in ("So", "Sm") else c for c in s)


def _clean_name(s: str) -> str | None:
    s = unicodedata.normalize("NFKC", s)
    s = re.sub(rf"[\d{NOTE_MARKS}{AFFILIATION_SYMBOLS}#‖|^~]+", " ", s)
    if re.search(r"[A-Za-z]", s):  # Greek letters after a Latin name are its marks
        s = re.sub(rf"(?<=[^\W\d_])[{GREEK_MARKS}]+(?=\s|$)", " ", s)
    s = re.sub(r"\s+", " ", s).strip(" ,.;:-")
    words = s.split()
    if not (2 <= len(words) <= 5) or len(s) > 50:
        return None
    for w in words:
        if w.lower() in NAME_PARTICLES:
            continue
        if not (w[0].isupper() and (len(w) == 1 or any(c.isalpha() for c in w[1:]) or w.endswith("."))):
            return None
        if sum(c.isalpha() for c in w) == 0:
            return None
    return s


def _abstract(lines: list[Line]) -> str:
    for i, ln in enumerate(lines):
        text = ln.text.strip()
        m = re.match(r"^(abstract|a b s t r a c t)\s*[:.—–-]?\s*(.*)$", text, re.I)
        if not m or ln.kind not in ("text", "heading", "title"):
            continue
        rest = m.group(2).strip()
        if rest and not re.match(r"^[A-Z(\"“]", rest):
            continue  # "abstractive summarisation ..." in running text
        body: list[str] = [rest] if rest else []
        prev = ln
        for nxt in lines[i + 1 :]:
            if nxt.kind == "heading" or len(" ".join(body).split()) > 450:
                break
            if nxt.kind in ("furniture", "figure", "table", "caption", "title"):
                continue
            if nxt.page_number != prev.page_number and body:
                break
            if re.match(r"^(keywords|index terms|ccs concepts)\b", nxt.text.strip(), re.I):
                break
            body.append(nxt.text)
            prev = nxt
        return _clean(join_lines(body))
    return ""


# ------------------------------------------------------------------------------------------------ JSON


class MetadataJSON(BaseModel):
    """An AirQA-style metadata file (``<uuid>.json``); unknown keys are kept but ignored."""

    model_config = ConfigDict(extra="allow")

    uuid: str | None = None
    title: str | None = None
    authors: list[str] | str | None = None
    abstract: str | None = None
    num_pages: int | None = None
    conference: str | None = None
    conference_full: str | None = None
    conference_year: str | None = None
    year: int | str | None = None
    volume: str | None = None
    bibtex: str | None = None
    pdf_url: str | None = None
    download_url: str | None = None
    pdf_path: str | None = None
    tldr: str | None = None
    tags: list[str] | None = None

    def resolved_conference_year(self) -> str | None:
        if self.conference_year:
            return self.conference_year.lower()
        if self.pdf_path:  # AirQA keeps papers in papers/<conference_year>/<uuid>.pdf
            folder = Path(self.pdf_path).parent.name.lower()
            if folder and CONF_YEAR_RE.match(folder) and folder != "papers":
                return folder
        if self.conference and self.year:
            cy = re.sub(r"[^a-z\d]", "", f"{self.conference}{self.year}".lower())
            return cy or None
        return None


class MetadataLookup:
    """Finds the metadata JSON of a PDF: beside it (``<stem>.json``) or in ``--metadata-dir`` by stem,
    by uuid-named file, or by normalised title."""

    def __init__(self, metadata_dir: Path | None):
        self.dir = Path(metadata_dir) if metadata_dir else None
        self._by_title: dict[str, Path] | None = None

    def find(self, pdf_path: Path, parsed_title: str) -> tuple[MetadataJSON | None, Path | None]:
        candidates = [pdf_path.with_suffix(".json")]
        if self.dir is not None:
            candidates.append(self.dir / f"{pdf_path.stem}.json")
        for c in candidates:
            if c.is_file():
                return load_metadata_json(c), c
        if self.dir is not None and parsed_title:
            hit = self._title_index().get(normalize_title(parsed_title))
            if hit is not None:
                return load_metadata_json(hit), hit
        return None, None

    def _title_index(self) -> dict[str, Path]:
        if self._by_title is None:
            self._by_title = {}
            for p in sorted(self.dir.glob("*.json")):
                try:
                    data = json.loads(p.read_text())
                except (OSError, ValueError):
                    continue
                if isinstance(data, dict) and isinstance(data.get("title"), str):
                    self._by_title.setdefault(normalize_title(data["title"]), p)
        return self._by_title


def load_metadata_json(path: Path) -> MetadataJSON:
    from evidex.tools.ingest.errors import IngestError

    try:
        data: Any = json.loads(Path(path).read_text())
        return MetadataJSON.model_validate(data)
    except (OSError, ValueError) as exc:
        raise IngestError(f"{path}: not a valid metadata JSON ({exc}).") from exc


def apply_metadata_json(meta: PaperMetadata, js: MetadataJSON | None) -> PaperMetadata:
    """JSON values win over parsed ones; the paper id is the JSON's uuid, else computed from title + venue."""
    data = meta.model_copy()
    if js is not None:
        if js.title:
            data.title = _clean(js.title)
        if js.authors:
            data.authors = [a.strip() for a in (js.authors.split(",") if isinstance(js.authors, str) else js.authors)]
        if js.abstract:
            data.abstract = js.abstract
        cy = js.resolved_conference_year()
        if cy:
            data.conference_year = cy
        data.conference_full = js.conference_full or data.conference_full
        data.conference_abbreviation = js.conference or data.conference_abbreviation
        if js.year is not None and str(js.year).isdigit():
            data.pub_year = int(js.year)
        data.volume = js.volume or data.volume
        data.bibtex = js.bibtex or data.bibtex
        data.download_url = js.download_url or js.pdf_url or data.download_url
        data.tldr = js.tldr or data.tldr
        data.tags = js.tags or data.tags
    data.paper_id = (js.uuid if js is not None and js.uuid else None) or airqa_paper_uuid(
        data.title or "untitled", data.conference_year
    )
    return data
