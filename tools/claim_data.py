"""Load the DATA72000-IBE explainer tasks (CIViC + R4C) into visible inputs and hidden gold.

The split matters: a :class:`ClaimInput` is all a graph ever sees; :class:`Gold` (gold explanation, hidden
missing evidence, which items are wrong, the right claim, golden facts) stays with the scorer.

Order bias: the original files list wrong evidence last and always make claim A the right one. With
``shuffle=True`` (the default) evidence order and the A/B labels are permuted with a seeded RNG per item, so
the same seed always gives the same input.
"""
from __future__ import annotations

import json
import random
from evidex.tools.claims import AssignLabel, Claim, ClaimInput, Evidence, Gold, Label, TaskItem
from evidex.tools.datasets import resolve_data_file

TASK_FILES: dict[str, str] = {
    "baseline": "ibe/CIVIC/baseline.json",
    "missing_evidence": "ibe/CIVIC/missing_evidence.json",
    "wrong_evidence": "ibe/CIVIC/wrong_evidence.json",
    "mixed": "ibe/CIVIC/mixed.json",
    "selection": "ibe/CIVIC/selection_test.json",
    "assignment": "ibe/CIVIC/assignment_test.json",
    "wrong_claim": "ibe/CIVIC/wrong_claim.json",
    "r4c": "ibe/R4C/full_data_noid.json",
}
CIVIC_KB_FILE = "ibe/CIVIC/evidence_kb.json"


def _evidence(raw: list[dict]) -> list[Evidence]:
    return [Evidence(id=str(e["evidence_id"]), text=str(e["description"]).strip()) for e in raw]


def _context(raw: dict | None) -> dict[str, str]:
    # Empty context values are shown as "Not Found" in the original prompts; we simply drop them.
    return {k: str(v).strip() for k, v in (raw or {}).items() if v is not None and str(v).strip()}


def _load_json(relpath: str) -> list[dict]:
    """The rows of a dataset file; a ValueError naming the file when it is not a JSON list of objects."""
    path = resolve_data_file(relpath)
    try:
        with open(path, encoding="utf-8") as fh:
            rows = json.load(fh)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{relpath} is not valid JSON ({exc}); file: {path}") from None
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise ValueError(f"{relpath} must hold a JSON list of objects (one per item); file: {path}")
    return rows


def load_kb(relpath: str = CIVIC_KB_FILE) -> list[Evidence]:
    """A knowledge base file: a JSON list of ``{evidence_id, description}`` objects."""
    rows = _load_json(relpath)
    if not all({"evidence_id", "description"} <= r.keys() for r in rows):
        raise ValueError(f"{relpath} is not a knowledge base: expected a JSON list of "
                         "{\"evidence_id\", \"description\"} objects (set retrieval.kb to such a file).")
    return _evidence(rows)


def _window(rows: list, offset: int, limit: int | None) -> list:
    """``offset`` rows skipped, then the first ``limit`` (all when None): the same rows for a task file and for
    the controls interleaved with it."""
    return rows[offset: offset + limit if limit else None]


def load_task(task: str, *, limit: int | None = None, offset: int = 0, shuffle: bool = True, seed: int = 13,
              with_controls: bool = True, file: str | None = None) -> list[TaskItem]:
    """Items of one task, in file order (``offset`` skipped, then the first ``limit`` of each file), inputs shuffled
    per item. Item ids keep their position in the file."""
    if task not in TASK_FILES:
        raise KeyError(f"Unknown task {task!r}; known tasks: {', '.join(TASK_FILES)}")
    relpath = file or TASK_FILES[task]
    rows = _window(_load_json(relpath), offset, limit)
    builder = _BUILDERS[task]
    try:
        items = [builder(task, i, row, random.Random(f"{seed}:{task}:{i}") if shuffle else None)
                 for i, row in enumerate(rows, start=offset)]
    except (KeyError, TypeError, AttributeError) as exc:
        what = f"lacks field {exc}" if isinstance(exc, KeyError) else f"has a field of the wrong type ({exc})"
        raise ValueError(f"{relpath} is not a {task} file: an item {what} (compare {TASK_FILES[task]})") from None
    if task == "wrong_claim" and with_controls:
        # Every wrong_claim item is unsupported, so a constant "no" would score 1.0. Baseline claims with
        # their own evidence are added as supported controls, interleaved, to make the accuracy meaningful.
        base = _window(_load_json(TASK_FILES["baseline"]), offset, limit)
        controls = [_control(i, row, random.Random(f"{seed}:control:{i}") if shuffle else None)
                    for i, row in enumerate(base, start=offset)]
        merged = []
        for a, b in zip(items, controls):
            merged += [a, b]
        items = merged + items[len(controls):] + controls[len(items):]
    return items


def load_claim_catalog(relpath: str = TASK_FILES["baseline"]) -> list[Claim]:
    """The claims of a task file, sentence and context only: the competing claims of
    :class:`agents.claim_catalog.ClaimCatalog`. Evidence lists (and so every hidden answer) are never read;
    selection/assignment files give both their claims."""
    out: list[Claim] = []
    for row in _load_json(relpath):
        for text_key, ctx_key in (("claim", "context"), ("claim_A", "context_A"), ("claim_B", "context_B")):
            if isinstance(row.get(text_key), str) and row[text_key].strip():
                out.append(Claim(text=row[text_key], context=_context(row.get(ctx_key))))
    if not out:
        raise ValueError(f"{relpath} holds no claims (rows with a 'claim' or 'claim_A'/'claim_B' field); point "
                         "gate.claim_catalog at a CIViC task file such as ibe/CIVIC/baseline.json, "
                         "or set it to null")
    return out


def _maybe_shuffle(seq: list, rng: random.Random | None) -> list:
    seq = list(seq)
    if rng is not None:
        rng.shuffle(seq)
    return seq


def _single(task: str, i: int, row: dict, rng: random.Random | None) -> TaskItem:
    shown = _evidence(row.get("evidence", []))
    wrong = _evidence(row.get("wrong_evidence", []))
    missing = _evidence(row.get("missing_evidence", []))
    # Deduplicate by id (one file lists a wrong item twice) while keeping the first occurrence.
    seen: set[str] = set()
    visible = [e for e in shown + wrong if not (e.id in seen or seen.add(e.id))]
    gold = Gold(
        explanations={"claim": row["explanation"]},
        missing_ids=[e.id for e in missing],
        # wrong_claim: every given item belongs to another assertion, so all of them are wrong.
        wrong_ids=sorted({e.id for e in (shown if task == "wrong_claim" else wrong)}),
        supported=False if task == "wrong_claim" else None,
        golden_facts=[str(f["description"]) for f in row.get("evidence_golden", [])],
        correct_evidence_texts=[e.text for e in shown] if task != "wrong_claim" else [],
    )
    inp = ClaimInput(
        id=f"{task}-{i:03d}", task=task,
        claims={"claim": Claim(text=row["claim"], context=_context(row.get("context")))},
        evidence=_maybe_shuffle(visible, rng),
    )
    return TaskItem(input=inp, gold=gold)


def _control(i: int, row: dict, rng: random.Random | None) -> TaskItem:
    item = _single("wrong_claim", i, row, rng)
    item.input.id = f"wrong_claim-control-{i:03d}"
    item.gold.supported = True
    item.gold.wrong_ids = []  # a control's own evidence is correct
    item.gold.correct_evidence_texts = [e.text for e in item.input.evidence]
    return item


def _selection(task: str, i: int, row: dict, rng: random.Random | None) -> TaskItem:
    a = Claim(text=row["claim_A"], context=_context(row.get("context_A")))
    b = Claim(text=row["claim_B"], context=_context(row.get("context_B")))
    swap = bool(rng and rng.random() < 0.5)
    claims = {"A": b, "B": a} if swap else {"A": a, "B": b}
    correct: Label = "B" if swap else "A"
    evidence = _evidence(row["evidence_A"])
    inp = ClaimInput(id=f"{task}-{i:03d}", task=task, claims=claims, evidence=_maybe_shuffle(evidence, rng))
    gold = Gold(explanations={correct: row["explanation_A"]}, correct_claim=correct,
                correct_evidence_texts=[e.text for e in evidence])
    return TaskItem(input=inp, gold=gold)


def _assignment(task: str, i: int, row: dict, rng: random.Random | None) -> TaskItem:
    a = Claim(text=row["claim_A"], context=_context(row.get("context_A")))
    b = Claim(text=row["claim_B"], context=_context(row.get("context_B")))
    swap = bool(rng and rng.random() < 0.5)
    la, lb = ("B", "A") if swap else ("A", "B")
    claims = {la: a, lb: b}
    claims = {"A": claims["A"], "B": claims["B"]}
    assign: dict[str, AssignLabel] = {}
    evidence: list[Evidence] = []
    for key, label in (("evidence_A", la), ("evidence_B", lb), ("evidence_C", "neither")):
        for e in _evidence(row.get(key, [])):
            if e.id not in assign:
                assign[e.id] = label
                evidence.append(e)
    inp = ClaimInput(id=f"{task}-{i:03d}", task=task, claims=claims, evidence=_maybe_shuffle(evidence, rng))
    gold = Gold(explanations={la: row["explanation_A"], lb: row["explanation_B"]}, assignment=assign)
    return TaskItem(input=inp, gold=gold)


_BUILDERS = {
    "baseline": _single, "missing_evidence": _single, "wrong_evidence": _single, "mixed": _single,
    "wrong_claim": _single, "r4c": _single, "selection": _selection, "assignment": _assignment,
}
