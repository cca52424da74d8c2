"""QASPER data: the official JSON layout and the Hugging Face layout, read into one set of typed records.

Layouts read (``load_qasper(path)``; ``.gz`` files are read transparently):

* **official** (``qasper-{train,dev,test}-v0.3.json``): one JSON object ``{paper_id: {title, abstract,
  full_text: [{section_name, paragraphs}], figures_and_tables: [{caption, file}], qas: [{question, question_id,
  answers: [{answer: {unanswerable, extractive_spans, yes_no, free_form_answer, evidence, highlighted_evidence},
  annotation_id, worker_id}]}]}}``;
* **Hugging Face** (``allenai/qasper`` rows, saved as JSON lines, a JSON list or parquet): one row per paper,
  ``{id, title, abstract, full_text: {section_name: [...], paragraphs: [[...], ...]}, qas: {question: [...],
  question_id: [...], answers: [{answer: [{...}], annotation_id: [...], worker_id: [...]}]},
  figures_and_tables: {caption: [...], file: [...]}}`` (columnar dicts);
* **per-paper JSON lines** ``{paper_id: {...official paper...}}`` on each line.

Order is kept: papers as in the file, questions as in each paper, annotations as annotated (the official
metric breaks ties by the first annotator). Every error names the file and what is wrong with it.
"""
from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from evidex.tools.store import row_uuid

FLOAT_PREFIX = "FLOAT SELECTED: "


class QasperDataError(ValueError):
    """A QASPER file is missing, unreadable or not in a known layout; the message names the file and the fix."""


class QasperAnswer(BaseModel):
    """One annotator's answer (``answers[j].answer`` of the official layout)."""

    unanswerable: bool = False
    extractive_spans: list[str] = Field(default_factory=list)
    yes_no: bool | None = None
    free_form_answer: str = ""
    evidence: list[str] = Field(default_factory=list)
    highlighted_evidence: list[str] = Field(default_factory=list)


class QasperQuestion(BaseModel):
    question_id: str
    question: str
    answers: list[QasperAnswer] = Field(default_factory=list)


class QasperSection(BaseModel):
    name: str | None = None  # "::: "-joined hierarchy, e.g. "Experiments ::: Results"; may be null
    paragraphs: list[str] = Field(default_factory=list)


class QasperFloat(BaseModel):
    """A figure or table: its caption (gold evidence quotes it as ``FLOAT SELECTED: <caption>``) and file name."""

    caption: str
    file: str = ""

    @property
    def is_table(self) -> bool:
        return self.caption.lstrip().lower().startswith("table") or "table" in self.file.lower()


class QasperPaper(BaseModel):
    paper_id: str
    title: str = ""
    abstract: str = ""
    sections: list[QasperSection] = Field(default_factory=list)
    floats: list[QasperFloat] = Field(default_factory=list)
    qas: list[QasperQuestion] = Field(default_factory=list)

    @property
    def store_id(self) -> str:
        return qasper_store_id(self.paper_id)

    def content_key(self) -> str:
        """A hash of everything ingestion stores (not the questions): a changed paper is ingested again."""
        import hashlib

        body = json.dumps([self.paper_id, self.title, self.abstract,
                           [s.model_dump() for s in self.sections], [f.model_dump() for f in self.floats]],
                          ensure_ascii=False)
        return hashlib.sha256(body.encode("utf-8")).hexdigest()


def qasper_store_id(paper_id: str) -> str:
    """The paper's id in a store (``metadata.paper_id`` is a UUID column): uuid5 of ``qasper/<paper id>``, stable
    across runs and machines. The QASPER id itself is kept in ``metadata.download_url`` and ``pdf_path``."""
    return row_uuid(f"qasper/{paper_id}")


# -------------------------------------------------------------------------------------------------- reading
def _open_text(path: Path) -> str:
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                return fh.read()
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        raise QasperDataError(f"{path}: cannot read the file ({exc})") from None


def _rows_of(path: Path) -> Iterator[tuple[str, Any]]:
    """(where, raw paper) pairs in file order, whatever the container."""
    name = path.name.lower().removesuffix(".gz")
    if name.endswith(".parquet"):
        try:
            import pyarrow.parquet as pq
        except ImportError:  # pragma: no cover - pyarrow ships with the core dependencies
            raise QasperDataError(f"{path}: reading parquet needs pyarrow (pip install pyarrow)") from None
        try:
            rows = pq.read_table(path).to_pylist()
        except Exception as exc:  # noqa: BLE001 - any parquet failure is a bad file
            raise QasperDataError(f"{path}: not a readable parquet file ({exc})") from None
        for i, row in enumerate(rows):
            yield f"{path} row {i + 1}", row
        return
    text = _open_text(path)
    stripped = text.lstrip()
    if not stripped:
        raise QasperDataError(f"{path}: the file is empty")
    whole: Any = None
    try:
        whole = json.loads(text)
    except json.JSONDecodeError as exc:
        if not (name.endswith(".jsonl") or stripped.startswith("{") and "\n{" in stripped):
            raise QasperDataError(f"{path}: malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}. "
                                  "Give the official QASPER JSON (qasper-dev-v0.3.json) or Hugging Face rows as "
                                  "JSON lines.") from None
    if whole is not None:
        if isinstance(whole, list):
            for i, row in enumerate(whole):
                yield f"{path} item {i + 1}", row
        elif isinstance(whole, dict) and _looks_like_paper(whole):
            yield str(path), whole  # a single HF row
        elif isinstance(whole, dict):
            for pid, paper in whole.items():
                yield f"{path} paper {pid}", {"__id__": pid, **paper} if isinstance(paper, dict) else paper
        else:
            raise QasperDataError(f"{path}: expected a JSON object of papers or a list of rows, "
                                  f"got {type(whole).__name__}")
        return
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise QasperDataError(f"{path} line {n}: malformed JSON ({exc.msg} at column {exc.colno})") from None
        if isinstance(row, dict) and not _looks_like_paper(row) and len(row) == 1:
            (pid, paper), = row.items()
            row = {"__id__": pid, **paper} if isinstance(paper, dict) else paper
        yield f"{path} line {n}", row


def _looks_like_paper(row: dict) -> bool:
    return "qas" in row or "full_text" in row


def _columnar(value: Any) -> bool:
    return isinstance(value, dict)


def _sections(raw: Any) -> list[QasperSection]:
    if raw is None:
        return []
    if _columnar(raw):  # HF: {section_name: [...], paragraphs: [[...], ...]}
        names = list(raw.get("section_name") or [])
        paras = list(raw.get("paragraphs") or [])
        if len(names) != len(paras):
            raise ValueError(f"full_text has {len(names)} section names but {len(paras)} paragraph lists")
        return [QasperSection(name=n, paragraphs=[str(p) for p in (ps or [])]) for n, ps in zip(names, paras)]
    return [QasperSection(name=s.get("section_name"), paragraphs=[str(p) for p in (s.get("paragraphs") or [])])
            for s in raw]


def _floats(raw: Any) -> list[QasperFloat]:
    if not raw:
        return []
    if _columnar(raw):
        captions, files = list(raw.get("caption") or []), list(raw.get("file") or [])
        files += [""] * (len(captions) - len(files))
        return [QasperFloat(caption=str(c), file=str(f or "")) for c, f in zip(captions, files) if c]
    return [QasperFloat(caption=str(f.get("caption") or ""), file=str(f.get("file") or "")) for f in raw
            if f.get("caption")]


def _answer(raw: dict) -> QasperAnswer:
    inner = raw.get("answer", raw) if isinstance(raw, dict) else raw
    if not isinstance(inner, dict):
        raise ValueError(f"an answer must be an object, got {type(inner).__name__}")
    return QasperAnswer(unanswerable=bool(inner.get("unanswerable")),
                        extractive_spans=[str(s) for s in inner.get("extractive_spans") or []],
                        yes_no=inner.get("yes_no"),
                        free_form_answer=str(inner.get("free_form_answer") or ""),
                        evidence=[str(e) for e in inner.get("evidence") or []],
                        highlighted_evidence=[str(e) for e in inner.get("highlighted_evidence") or []])


def _questions(raw: Any) -> list[QasperQuestion]:
    if raw is None:
        return []
    if _columnar(raw):  # HF: {question: [...], question_id: [...], answers: [{answer: [...], ...}, ...]}
        qs, ids, answers = list(raw.get("question") or []), list(raw.get("question_id") or []), list(raw.get("answers") or [])
        if not (len(qs) == len(ids) == len(answers)):
            raise ValueError(f"qas has {len(qs)} questions, {len(ids)} ids and {len(answers)} answer groups")
        out = []
        for q, qid, group in zip(qs, ids, answers):
            anns = group.get("answer") if isinstance(group, dict) else group
            out.append(QasperQuestion(question_id=str(qid), question=str(q), answers=[_answer(a) for a in anns or []]))
        return out
    return [QasperQuestion(question_id=str(q["question_id"]), question=str(q["question"]),
                           answers=[_answer(a) for a in q.get("answers") or []]) for q in raw]


def parse_paper(raw: Any, where: str = "paper") -> QasperPaper:
    """One paper of either layout; a ``ValueError`` names ``where`` and the broken field."""
    if not isinstance(raw, dict):
        raise QasperDataError(f"{where}: a paper must be a JSON object, got {type(raw).__name__}")
    pid = raw.get("__id__") or raw.get("id") or raw.get("paper_id")
    if not pid:
        raise QasperDataError(f"{where}: no paper id (official layout: the key of the paper; Hugging Face: 'id')")
    try:
        return QasperPaper(paper_id=str(pid), title=str(raw.get("title") or ""), abstract=str(raw.get("abstract") or ""),
                           sections=_sections(raw.get("full_text")), floats=_floats(raw.get("figures_and_tables")),
                           qas=_questions(raw.get("qas")))
    except (KeyError, TypeError, AttributeError, ValueError, ValidationError) as exc:
        detail = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc).splitlines()[0]
        raise QasperDataError(f"{where} ({pid}): not a QASPER paper ({detail})") from None


def load_qasper(path: str | Path) -> list[QasperPaper]:
    """Every paper of a QASPER file in either layout, in file order. Raises :class:`QasperDataError`."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise QasperDataError(f"{path}: no such QASPER file. Pass --data with the official JSON (e.g. "
                              "qasper-dev-v0.3.json from the allenai/qasper release) or Hugging Face rows.")
    papers = [parse_paper(raw, where) for where, raw in _rows_of(path)]
    if not papers:
        raise QasperDataError(f"{path}: holds no papers")
    seen: dict[str, int] = {}
    for p in papers:
        seen[p.paper_id] = seen.get(p.paper_id, 0) + 1
    dupes = [k for k, n in seen.items() if n > 1]
    if dupes:
        raise QasperDataError(f"{path}: paper ids occur more than once: {', '.join(dupes[:5])}")
    qids: set[str] = set()
    for p in papers:
        for q in p.qas:
            if q.question_id in qids:
                raise QasperDataError(f"{path}: question id {q.question_id} occurs more than once")
            qids.add(q.question_id)
    return papers


def to_official(papers: Iterable[QasperPaper]) -> dict[str, dict]:
    """Papers in the official layout (what the official evaluator reads as ``--gold``)."""
    out = {}
    for p in papers:
        out[p.paper_id] = {
            "title": p.title, "abstract": p.abstract,
            "full_text": [{"section_name": s.name, "paragraphs": list(s.paragraphs)} for s in p.sections],
            "figures_and_tables": [f.model_dump() for f in p.floats],
            "qas": [{"question": q.question, "question_id": q.question_id,
                     "answers": [{"answer": a.model_dump()} for a in q.answers]} for q in p.qas],
        }
    return out


def paper_index(papers: Iterable[QasperPaper]) -> dict[str, QasperPaper]:
    return {p.paper_id: p for p in papers}
