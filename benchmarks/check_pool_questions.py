"""Check the AirQA-format questions written over the pool papers (``benchmarks/data/airqa_pool_questions.jsonl``).

    python -m benchmarks.check_pool_questions                      # pool from $EVIDEX_DATA_DIR/../corpus/pool
    python -m benchmarks.check_pool_questions --pool ../shared/corpus/pool
    python -m benchmarks.check_pool_questions --questions benchmarks/data/airqa_pool_blind3_questions.jsonl

For every question it verifies:

* the uuid is ``uuid5(NAMESPACE_DNS, question)``, and no uuid or question text occurs twice;
* every anchor, reference and gold-page pdf is a paper of ``pool_manifest.tsv``, and ``source_file`` names its
  ``pool/pdfs/...`` file;
* the split holds by paper: each paper belongs to the split given by a hash of its AirQA uuid
  (:func:`paper_split`), every paper of a question is in that question's ``split``, so no paper has questions
  in both splits;
* each ``gold_snippets`` text occurs on its gold page of the PDF after normalisation (NFKC, whitespace
  collapsed; a word broken by a line-end hyphen also matches joined), and every page in ``gold_pages`` carries
  at least one snippet;
* the snippets carry the answer: unless ``gold_computed`` is true (a difference, count, superlative or a value
  computed from an equation, whose operands the snippets hold), the gold value is written in them (a number as
  printed, with or without thousands separators or as a word; every element of a list answer; for
  ``element_included`` one of the accepted strings); a retrieval question's reference answer is the title of
  its gold paper in the manifest;
* the evaluator is objective (no LLM judge), its gold scores 1, and a constant wrong answer (``"zzz"``, and for
  numbers the gold plus one) scores 0.

It prints the question counts per split and tag and exits 1 when anything fails. The only evidex import is
``evidex.evaluators.airqa`` for scoring.
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import re
import sys
import unicodedata
import uuid
from collections import Counter, defaultdict
from pathlib import Path

QUESTIONS = Path(__file__).resolve().parent / "data" / "airqa_pool_questions.jsonl"
SPLITS = ("pool_dev", "pool_test")
SPLIT_SALT = "airqa-pool-split/1:"
CAPABILITIES = ("text", "table", "formula", "metadata", "image")
TASKS = ("single", "multiple", "retrieval")
FIELDS = ("uuid", "question", "answer_format", "tags", "anchor_pdf", "reference_pdf", "conference",
          "reasoning_steps", "evaluator", "gold_pages", "source_file", "split", "gold_computed", "gold_snippets")
NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                "twelve")


def default_pool() -> Path:
    data = os.environ.get("EVIDEX_DATA_DIR")
    return Path(data).parent / "corpus" / "pool" if data else Path("../shared/corpus/pool")


def paper_split(paper_uuid: str) -> str:
    """The split of a pool paper: the parity of the first byte of sha256(salt + AirQA uuid)."""
    return SPLITS[hashlib.sha256((SPLIT_SALT + paper_uuid).encode()).digest()[0] % 2]


def normalise(text: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text)).strip()


def page_variants(text: str) -> tuple[str, ...]:
    """A page's normalised text, plus the same with line-end hyphens joined (dropped, or kept without the space)."""
    flat = normalise(text)
    return (flat, re.sub(r"(?<=[a-z])- (?=[a-z])", "", flat), re.sub(r"(?<=\w)- (?=\w)", "-", flat))


def read_manifest(pool: Path) -> dict[str, dict]:
    with open(pool / "pool_manifest.tsv", newline="") as f:
        return {row["airqa_uuid"]: row for row in csv.DictReader(f, delimiter="\t")}


def papers_of(row: dict) -> list[str]:
    """The papers a question is about: its anchors and references, or the gold paper of a retrieval question."""
    return list(dict.fromkeys(row["anchor_pdf"] + row["reference_pdf"] + [g["pdf"] for g in row["gold_pages"]]))


def gold_value(evaluator: dict):
    """The gold answer of an evaluator as a value; a conjunction's is the list of its parts' gold values."""
    func, kw = evaluator["eval_func"], evaluator["eval_kwargs"]
    if func == "eval_conjunction":  # one element per evaluator it combines
        return [gold_value(part) for part in parts(evaluator)]
    if func == "eval_paper_relevance_with_reference_answer":
        value = kw["reference_answer"]
        return value[0] if isinstance(value, list) else value
    if func in ("eval_element_included", "eval_string_exact_match", "eval_string_fuzzy_match") \
            and isinstance(kw["gold"], list):
        return kw["gold"][0]
    return kw["gold"]


def gold_prediction(evaluator: dict) -> str:
    """The gold answer of an evaluator, written as a prediction string."""
    value = gold_value(evaluator)
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def written_forms(value, ndigits: int | None = None) -> list[str]:
    """The ways a gold value can be printed in a paper (lower-cased)."""
    if isinstance(value, str):
        return [normalise(value).lower()]
    if isinstance(value, int):
        words = [NUMBER_WORDS[value]] if 0 <= value < len(NUMBER_WORDS) else []
        return [str(value), f"{value:,}", *words]
    forms = [repr(value), f"{value:.{ndigits}f}" if ndigits is not None else repr(value)]
    return [f.lower() for f in forms]


def parts(evaluator: dict) -> list[dict]:
    """The evaluators an ``eval_conjunction`` combines, each as ``{"eval_func", "eval_kwargs"}``."""
    kw = evaluator["eval_kwargs"]
    return [{"eval_func": f, "eval_kwargs": k} for f, k in zip(kw["eval_func_list"], kw["eval_kwargs_list"])]


def carries_gold(row: dict, manifest: dict[str, dict]) -> bool:
    """Whether the snippets write the gold answer (see the module docstring); for a conjunction, every part's."""
    func, kw = row["evaluator"]["eval_func"], row["evaluator"]["eval_kwargs"]
    if func == "eval_conjunction":
        return all(carries_gold({**row, "evaluator": part}, manifest) for part in parts(row["evaluator"]))
    if func == "eval_paper_relevance_with_reference_answer":
        return normalise(kw["reference_answer"]) == normalise(manifest[row["gold_pages"][0]["pdf"]]["title"])
    text = " ".join(page_variants(" ".join(s["text"] for s in row["gold_snippets"]))).lower()

    def written(value) -> bool:
        if isinstance(value, list):
            return all(written(v) for v in value)
        if isinstance(value, dict):
            return all(written(v) for v in value.values())
        return any(form in text for form in written_forms(value, kw.get("ndigits")))

    gold = kw["gold"]
    if func == "eval_element_included" or (isinstance(gold, list) and func == "eval_string_exact_match"):
        return any(written(g) for g in gold)
    return written(gold)


def wrong_predictions(evaluator: dict) -> list[str]:
    wrong = ["zzz"]
    gold = evaluator["eval_kwargs"].get("gold")
    if evaluator["eval_func"] in ("eval_int_exact_match", "eval_float_exact_match") and not isinstance(gold, bool):
        wrong.append(json.dumps(gold + 1))
    return wrong


class PageText:
    """Page texts of the pool PDFs, read once with PyMuPDF."""

    def __init__(self, pool: Path, manifest: dict[str, dict]):
        self.pool, self.manifest, self.cache = pool, manifest, {}

    def __call__(self, paper: str, page: int) -> tuple[str, ...] | None:
        if paper not in self.cache:
            import pymupdf

            with pymupdf.open(self.pool / self.manifest[paper]["file"]) as doc:
                self.cache[paper] = [page_variants(p.get_text()) for p in doc]
        pages = self.cache[paper]
        return pages[page - 1] if 1 <= page <= len(pages) else None


def check_row(row: dict, manifest: dict[str, dict], page_text: PageText, splits: tuple[str, ...] = SPLITS,
              by_paper: bool = True) -> list[str]:
    from evidex.evaluators.airqa import EVAL_FUNCS, evaluate, requires_judge

    problems = [f"missing field {name}" for name in FIELDS if name not in row]
    if problems:
        return problems
    if row["uuid"] != str(uuid.uuid5(uuid.NAMESPACE_DNS, row["question"])):
        problems.append("uuid is not uuid5(NAMESPACE_DNS, question)")
    tags = row["tags"]
    task = [t for t in tags if t in TASKS]
    if len(task) != 1 or "objective" not in tags or not any(t in CAPABILITIES for t in tags):
        problems.append(f"tags {tags} need one task tag, a capability tag and 'objective'")
    if row["split"] not in splits:
        problems.append(f"split {row['split']!r} is not one of {splits}")
    if not row["answer_format"] or not row["reasoning_steps"] or not row["gold_pages"]:
        problems.append("empty answer_format, reasoning_steps or gold_pages")
    papers = papers_of(row)
    unknown = [p for p in papers if p not in manifest]
    if unknown:
        return problems + [f"papers not in pool_manifest.tsv: {unknown}"]
    if task == ["retrieval"]:
        if row["anchor_pdf"] or row["conference"] != ["acl2023"] or len(papers) != 1:
            problems.append("a retrieval question has no anchor, conference ['acl2023'] and one gold paper")
    elif task == ["multiple"] and len(row["anchor_pdf"]) + len(row["reference_pdf"]) < 2:
        problems.append("a multiple question needs two papers")
    elif task == ["single"] and len(row["anchor_pdf"]) != 1:
        problems.append("a single question needs one anchor paper")
    main = row["anchor_pdf"] or papers
    files = ["pool/" + manifest[p]["file"] for p in main]
    if row["source_file"] != (files[0] if len(files) == 1 else files):
        problems.append(f"source_file {row['source_file']} is not {files}")
    for paper in papers if by_paper else []:
        if paper_split(paper) != row["split"]:
            problems.append(f"paper {paper} belongs to {paper_split(paper)}, the question is in {row['split']}")
    # the gold is printed on its pages
    covered = set()
    for snip in row["gold_snippets"]:
        key = (snip["pdf"], snip["page"])
        if {"pdf": snip["pdf"], "page": snip["page"]} not in row["gold_pages"]:
            problems.append(f"snippet on {key}, which is not a gold page")
            continue
        variants = page_text(*key)
        if variants is None:
            problems.append(f"no page {snip['page']} in {snip['pdf']}")
        elif not any(normalise(snip["text"]) in v for v in variants):
            problems.append(f"snippet not on page {snip['page']} of {snip['pdf'][:8]}: {snip['text'][:80]!r}")
        covered.add(key)
    for gold_page in row["gold_pages"]:
        if (gold_page["pdf"], gold_page["page"]) not in covered:
            problems.append(f"gold page {gold_page} has no snippet")
    if not row["gold_computed"] and not carries_gold(row, manifest):
        problems.append("the snippets do not write the gold answer (and gold_computed is false)")
    # scoring
    evaluator = row["evaluator"]
    if evaluator["eval_func"] not in EVAL_FUNCS or requires_judge(evaluator):
        return problems + [f"eval_func {evaluator['eval_func']} is not an objective AirQA function"]
    gold = evaluate(gold_prediction(evaluator), evaluator)
    if gold.score != 1.0 or gold.error:
        problems.append(f"the gold scores {gold.score} ({gold.error})")
    for wrong in wrong_predictions(evaluator):
        if evaluate(wrong, evaluator).score != 0:
            problems.append(f"the wrong answer {wrong!r} scores above 0")
    return problems


def check(rows: list[dict], pool: Path, splits: tuple[str, ...] = SPLITS, by_paper: bool = True) -> list[str]:
    """Every problem of the question file, as 'uuid8: message' lines (empty when all holds). ``by_paper``: each
    paper's questions are in the split its hash gives (pool_dev / pool_test); a set of its own (``splits``, e.g.
    the pool table questions) is checked without it."""
    manifest = read_manifest(pool)
    page_text = PageText(pool, manifest)
    problems = []
    for name in ("uuid", "question"):
        for value, n in Counter(r.get(name) for r in rows).items():
            if n > 1:
                problems.append(f"duplicate {name}: {str(value)[:80]!r} ({n} times)")
    splits_of = defaultdict(set)
    for row in rows:
        problems += [f"{str(row.get('uuid'))[:8]}: {p}" for p in check_row(row, manifest, page_text, splits, by_paper)]
        for paper in papers_of(row) if "gold_pages" in row else []:
            splits_of[paper].add(row.get("split"))
    problems += [f"paper {p} has questions in {sorted(s)}" for p, s in splits_of.items() if len(s) > 1]
    return problems


def counts(rows: list[dict], splits: tuple[str, ...] = SPLITS) -> dict[str, Counter]:
    table = {split: Counter() for split in splits}
    for row in rows:
        table[row["split"]].update(["questions"] + [t for t in row["tags"] if t != "objective"])
    for split in splits:
        table[split]["papers"] = len({p for r in rows if r["split"] == split for p in papers_of(r)})
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    parser.add_argument("--pool", type=Path, default=None,
                        help="the pool folder with pool_manifest.tsv and pdfs/ (default: $EVIDEX_DATA_DIR/../corpus/pool)")
    args = parser.parse_args(argv)
    pool = args.pool or default_pool()
    if not (pool / "pool_manifest.tsv").is_file():
        print(f"error: {pool}/pool_manifest.tsv not found; pass --pool DIR (the folder holding the pool PDFs)")
        return 2
    rows = [json.loads(line) for line in args.questions.read_text().splitlines() if line.strip()]
    splits = tuple(dict.fromkeys(str(r.get("split")) for r in rows))
    if set(splits) <= set(SPLITS):
        problems, splits = check(rows, pool), SPLITS
    else:  # a set of its own (a blind set): checked as one set, not split by paper
        problems = check(rows, pool, splits=splits, by_paper=False)
    table = counts(rows, splits)
    keys = ["questions", "papers", *TASKS, *CAPABILITIES]
    print("split      " + " ".join(f"{k:>9}" for k in keys))
    for split in splits:
        print(f"{split:<10} " + " ".join(f"{table[split][k]:>9}" for k in keys))
    funcs = Counter(r["evaluator"]["eval_func"].removeprefix("eval_") for r in rows)
    print("eval functions: " + ", ".join(f"{f} {n}" for f, n in funcs.most_common()))
    for problem in problems:
        print("FAIL " + problem)
    papers = len({p for r in rows for p in papers_of(r)})
    print(f"{'FAILED' if problems else 'OK'}: {len(rows)} questions over {papers} pool papers, "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
