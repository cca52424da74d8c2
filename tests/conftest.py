"""Shared fixtures for the graph, config, runner and real-model tests.

* Environment defaults (offline hub, no telemetry) and ``EVIDEX_DATA_DIR`` defaulting to ``../shared/data``
  next to the repository. Tests that need the datasets skip, with the reason, when the files are absent; they
  never download them.
* ``embedder``: one real MiniLM model per session (``tools.embeddings.get_embeddings``, the same cached object
  the runner and the CLI use).
* ``kb_index``: one CIViC KB index per session, built into a temporary cache folder (``evidex_cache`` /
  ``indexes``), passed as ``index=`` to ``build_graph``/``run_task``. The CLI tests point ``EVIDEX_CACHE_DIR``
  at the same folder (``use_test_cache``) so ``python -m graphs.run`` opens it instead of building another.
* ``responder`` / :class:`Responder`: a prompt-routing scripted reply function for ``ScriptedChatModel``. It
  tells the roles apart by their TASK line and answers valid JSON for each:

  ===========  ==========================================================  ========================================
  role         TASK line                                                   reply
  ===========  ==========================================================  ========================================
  judge        ``TASK: Judge evidence [ID]``                               ``{"evidence_finding": ..., "label": ...}``
  stances      ``TASK: Label each of [ID], ...``                           one label per id
  reasons      ``TASK: Reasons (...)`` (the grounded writer)               a reason per EVIDENCE id
  selection    ``TASK: The EVIDENCE was collected for exactly one``        ``{"reason": ..., "answer": "A"}``
  assignment   ``TASK: For each evidence item ... decide which claim``     one ``{"reason", "claim"}`` per id
  ===========  ==========================================================  ========================================
"""
from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
if not os.environ.get("EVIDEX_DATA_DIR") and (REPO.parent / "shared" / "data").is_dir():
    os.environ["EVIDEX_DATA_DIR"] = str(REPO.parent / "shared" / "data")

CIVIC_KB = "ibe/CIVIC/evidence_kb.json"
ALL_TASKS = ("baseline", "missing_evidence", "wrong_evidence", "mixed", "selection", "assignment", "r4c",
             "wrong_claim")


# ------------------------------------------------------------------------------------------------ data
def data_file(relpath: str) -> Path | None:
    """The dataset file under EVIDEX_DATA_DIR, or None (never downloads)."""
    root = os.environ.get("EVIDEX_DATA_DIR")
    if not root:
        return None
    path = Path(root) / relpath
    return path if path.is_file() else None


def require_task_data(task: str) -> None:
    from evidex.tools.claim_data import TASK_FILES

    # baseline.json: the claim catalog (gate.claim_catalog) and wrong_claim's supported controls
    needed = [TASK_FILES[task], CIVIC_KB, "ibe/CIVIC/baseline.json"]
    missing = [f for f in needed if data_file(f) is None]
    if missing:
        pytest.skip(f"dataset files missing under EVIDEX_DATA_DIR={os.environ.get('EVIDEX_DATA_DIR')!r}: "
                    f"{', '.join(missing)} (point EVIDEX_DATA_DIR at ../shared/data)")


@pytest.fixture(scope="session")
def civic_data() -> Path:
    """Skip unless every CIViC + R4C file is present."""
    from evidex.tools.claim_data import TASK_FILES

    missing = [f for f in [*TASK_FILES.values(), CIVIC_KB] if data_file(f) is None]
    if missing:
        pytest.skip(f"dataset files missing under EVIDEX_DATA_DIR={os.environ.get('EVIDEX_DATA_DIR')!r}: "
                    f"{', '.join(missing)} (point EVIDEX_DATA_DIR at ../shared/data)")
    return Path(os.environ["EVIDEX_DATA_DIR"])


# ------------------------------------------------------------------------------------------------ model + index
@pytest.fixture(scope="session")
def embedder():
    """The real MiniLM embedder, loaded once (get_embeddings is cached, so the runner/CLI reuse it)."""
    from evidex.tools.embeddings import get_embeddings

    emb = get_embeddings("all-MiniLM-L6-v2")
    emb.encode(["warm up"])
    return emb


@pytest.fixture(scope="session")
def evidex_cache(tmp_path_factory) -> Path:
    """A private EVIDEX_CACHE_DIR for this session (indexes only; models stay in the user's cache)."""
    return tmp_path_factory.mktemp("evidex_cache")


@pytest.fixture(scope="session")
def kb_index(civic_data, embedder, evidex_cache):
    """The CIViC KB index, built once into the session cache under the name graphs.deps would use."""
    from evidex.tools.claim_data import load_kb
    from evidex.tools.kb_index import KBDoc, KnowledgeBaseIndex

    docs = [KBDoc(id=e.id, text=e.text) for e in load_kb(CIVIC_KB)]
    name = CIVIC_KB.replace("/", "_").removesuffix(".json")
    _seed_index_from_user_cache(name, docs, embedder, evidex_cache / "indexes")
    index = KnowledgeBaseIndex.open(name, docs, embedder, evidex_cache / "indexes")
    assert len(index.docs) == len(docs) > 0
    return index


def _seed_index_from_user_cache(name, docs, embedder, index_root: Path) -> None:
    """Building the 285-item index costs ~45 s on two busy cores. When the user's cache already holds a
    finished index with exactly this content hash, copy it (read-only use of the user's cache); ``open``
    still validates it. Set EVIDEX_TEST_BUILD_INDEX=1 to always build from scratch."""
    import shutil

    from evidex.tools.kb_index import DEFAULT_ANALYZER, content_hash
    from evidex.tools.settings import Settings

    if os.environ.get("EVIDEX_TEST_BUILD_INDEX") == "1":
        return
    folder_name = f"{name}-{content_hash(docs, embedder.model_name, DEFAULT_ANALYZER)}"
    try:
        src = Settings().index_dir / "kb" / folder_name
    except Exception:  # noqa: BLE001 - a broken .env must not break the tests
        return
    if (src / "complete.json").is_file() and not (index_root / "kb" / folder_name).exists():
        try:
            shutil.copytree(src, index_root / "kb" / folder_name)
        except OSError:
            shutil.rmtree(index_root / "kb" / folder_name, ignore_errors=True)


@pytest.fixture
def use_test_cache(evidex_cache, monkeypatch):
    """Point EVIDEX_CACHE_DIR at the session cache (so code that opens the index itself reuses kb_index)."""
    from evidex.tools.settings import get_settings

    monkeypatch.setenv("EVIDEX_CACHE_DIR", str(evidex_cache))
    get_settings.cache_clear()
    yield evidex_cache
    monkeypatch.undo()
    get_settings.cache_clear()


# ------------------------------------------------------------------------------------------------ responder
ROLE_MARKERS = (  # order matters only if two markers could co-occur; they cannot in the shipped prompts
    ("judge", re.compile(r"TASK: Judge evidence \[([^\]\n]+)\]")),
    ("stances", re.compile(r"TASK: Label each of")),
    ("reasons", re.compile(r"TASK: Reasons \(")),
    ("selection", re.compile(r"TASK: The EVIDENCE was collected for exactly one")),
    ("assignment", re.compile(r"TASK: For each evidence item .*decide which claim")),
)
REPAIR_MARKER = "Your previous reply was not valid"
_EVIDENCE_LINE = re.compile(r"^\[([^\]\n]+)\] (.*)$", re.M)
_CLAIM_LINE = re.compile(r"^CLAIM(?: ([AB]))?: (.*)$", re.M)


def prompt_role(prompt: str) -> str:
    for role, pattern in ROLE_MARKERS:
        if pattern.search(prompt):
            return role
    raise AssertionError(f"prompt has no known TASK line: {prompt[-400:]!r}")


def evidence_lines(prompt: str) -> dict[str, str]:
    """id -> shown text of the items in the prompt's EVIDENCE block (the first HUMAN message)."""
    human = _evidence_turn(prompt)
    if "EVIDENCE:\n" not in human:
        return {}
    block = human.split("EVIDENCE:\n", 1)[1].split("\n\n", 1)[0]
    return dict(_EVIDENCE_LINE.findall(block))


def _evidence_turn(prompt: str) -> str:
    """The last HUMAN message that shows evidence: after a worked example (the grounded reasons call) it is the
    real one, and a repair turn (which shows none) leaves the one before it."""
    turns = prompt.split("HUMAN: ")[1:] or [prompt]
    return next((t for t in reversed(turns) if "EVIDENCE:\n" in t), turns[-1])


def scripted_reason(claim: str, shown: str) -> str:
    """A reason that passes the code check: the claim's names, then the first words of the item's finding."""
    from evidex.tools.reasons import names

    lead = " ".join(dict.fromkeys(names(claim))) or claim.split()[0]
    words = re.sub(r"[^\w\s%.-]", " ", shown.split(": ", 1)[-1]).split()[:6]
    return f"Evidence on {lead}: {' '.join(words).rstrip('.')}, which bears on the claim."


def prompt_claims(prompt: str) -> dict[str, str]:
    """'claim' / 'A' / 'B' -> claim text shown in the prompt."""
    human = _evidence_turn(prompt).split("EVIDENCE:\n", 1)[0]
    return {(k or "claim"): v for k, v in _CLAIM_LINE.findall(human)}


def task_ids(prompt: str) -> list[str]:
    """The ids named on the prompt's TASK line (a batched stance call names the ids it asks about)."""
    line = prompt[prompt.rindex("TASK: "):].split("\n", 1)[0]
    return re.findall(r"\[([^\]\n]+)\]", line)


def judged_id(prompt: str) -> str | None:
    """The id a per-item judge call asks about (``judge.strategy: llm``)."""
    m = ROLE_MARKERS[0][1].search(prompt)
    return m.group(1) if m else None


@dataclass
class Call:
    role: str
    prompt: str
    repair: bool
    claims: dict[str, str]
    ids: list[str]


@dataclass
class Responder:
    """Prompt-routing reply function for ``ScriptedChatModel(responses=Responder(...))``.

    ``judge_label(id) -> label`` (default: supports) answers the LLM judge; ``stance`` the batched stance calls
    (``stance_label(id) -> label``, when given, per id);
    ``answer`` the selection; ``assign(position, id) -> A|B|neither`` the assignment (default cycles A, B,
    neither by position in the EVIDENCE block). ``hook(call) -> str | None`` runs first: return a reply to
    override the role's answer, or raise (e.g. KeyboardInterrupt) to simulate a failure.
    """

    judge_label: Callable[[str], str] = lambda _id: "supports"
    stance: str = "supports"
    stance_label: Callable[[str], str] | None = None
    answer: str = "A"
    assign: Callable[[int, str], str] = lambda pos, _id: ("A", "B", "neither")[pos % 3]
    hook: Callable[[Call], str | None] | None = None
    calls: list[Call] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, prompt: str) -> str:
        call = Call(role=prompt_role(prompt), prompt=prompt, repair=REPAIR_MARKER in prompt,
                    claims=prompt_claims(prompt), ids=list(evidence_lines(prompt)))
        with self._lock:
            self.calls.append(call)
        if self.hook is not None:
            reply = self.hook(call)
            if reply is not None:
                return reply
        return json.dumps(self.reply(call))

    def reply(self, call: Call) -> dict:
        shown = evidence_lines(call.prompt)
        if call.role == "judge":
            jid = judged_id(call.prompt)
            return {"evidence_finding": f"scripted judgement of item {jid}", "label": self.judge_label(jid)}
        if call.role == "stances":
            return {i: self.stance_for(i) for i in task_ids(call.prompt)}
        if call.role == "reasons":  # the grounded writer: a reason per kept item
            claim = next(iter(call.claims.values()), "")
            return {i: scripted_reason(claim, shown[i]) for i in shown}
        if call.role == "selection":
            return {"reason": "scripted choice", "answer": self.answer}
        if call.role == "assignment":
            return {i: {"reason": f"scripted assignment of {i}", "claim": self.assign(pos, i)}
                    for pos, i in enumerate(shown)}
        raise AssertionError(call.role)

    def stance_for(self, eid: str) -> str:
        return self.stance_label(eid) if self.stance_label is not None else self.stance

    # -- helpers for assertions
    def roles(self) -> list[str]:
        return [c.role for c in self.calls]

    def calls_for_claim(self, claim_text: str) -> list[Call]:
        return [c for c in self.calls if claim_text in c.claims.values()]


@pytest.fixture
def responder() -> Responder:
    return Responder()


@pytest.fixture
def make_llm():
    """``make_llm(responder_or_list) -> ScriptedChatModel``."""
    from evidex.agents.scripted import ScriptedChatModel

    def make(responses=None):
        return ScriptedChatModel(responses=responses if responses is not None else Responder())
    return make


@pytest.fixture(scope="session")
def kit():
    """The helpers above for test modules (import them through this fixture, not ``from conftest import``:
    tests/tools has its own conftest.py, and two top-level ``conftest`` modules shadow each other)."""
    import types

    return types.SimpleNamespace(
        Responder=Responder, Call=Call, ALL_TASKS=ALL_TASKS, CIVIC_KB=CIVIC_KB, REPAIR_MARKER=REPAIR_MARKER,
        data_file=data_file, require_task_data=require_task_data, prompt_role=prompt_role,
        evidence_lines=evidence_lines, prompt_claims=prompt_claims, judged_id=judged_id,
        task_ids=task_ids,
    )
