"""The NeuSym agent graph with a scripted model over a real (synthetic-PDF) store: the probe as the first
observation, the early answer, every action, tool errors as observations, malformed replies, citations checked
against the store, the last turn answering from what the turns found, typed steps and observations, and settings
read per run (LangGraph ``context``) by one compiled graph."""
from __future__ import annotations

import json
import re

import pytest

CHUNK = re.compile(r"\[chunks\.([0-9a-f-]+), ")
ANSWER_CALL = 'Reply with one JSON object {"answer"'  # the answer readers' model call (qa_answer prompt)
MISS = "not in the look-up"  # an early answer the probe does not hold: the turns begin


class Raw(str):
    """A reply sent as it is (not wrapped into ``{"answer": ...}``)."""


class Script:
    """A scripted model's replies, by prompt: an agent turn gets the next of ``turns`` (dicts become
    ``{"step": ...}`` with a thought when they have none), an answer call over a context (the early answer, the
    answer from what the turns found) the next of ``answers`` (values become ``{"answer": ...}``, :class:`Raw`
    replies stay as they are).
    ``native``: replies are tool calls ``{"tool", "args"}`` (qa.tool_calling=native)."""

    def __init__(self, turns=(), answers=(MISS,), native: bool = False):
        self.turns, self.answers, self.native = list(turns), list(answers), native
        self.turn_prompts: list[str] = []
        self.answer_prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        if ANSWER_CALL in prompt:
            self.answer_prompts.append(prompt)
            if not self.answers:
                raise AssertionError(f"an answer call nobody expected: {prompt[-300:]}")
            reply = self.answers.pop(0)
            if self.native:  # a tool-calling model's reply is a tool call, never a JSON answer
                return json.dumps({"tool": "none", "args": {}})
            return reply if isinstance(reply, Raw) else json.dumps({"answer": reply})
        self.turn_prompts.append(prompt)
        if not self.turns:
            raise AssertionError(f"a turn nobody expected: {prompt[-300:]}")
        reply = self.turns.pop(0)
        if isinstance(reply, str) or self.native:
            return reply if isinstance(reply, str) else json.dumps(reply)
        return json.dumps({"step": {"thought": "next", **reply}})

    def llm(self):
        from evidex.agents.scripted import ScriptedChatModel

        return ScriptedChatModel(responses=self, tool_calls=self.native)


@pytest.fixture(scope="module")
def store(synthetic_store):
    store_dir, report = synthetic_store
    paper = next(f for f in report.files if f.status == "ingested")
    return str(store_dir), paper.paper_id, paper.pages


def config(store_dir: str, *settings: str, task: str = "airqa/airqa"):
    from evidex.graphs.tasks import load_config

    return load_config(task, [f"store.store_dir={store_dir}", *settings])


def graph_for(llm, store_dir: str, *settings: str, task: str = "airqa/airqa"):
    from evidex.graphs.qa.neusym import build_neusym

    return build_neusym(llm, config(store_dir, *settings, task=task))


def ask(graph, paper_id, question="How many pages does the paper have?", answer_format="A short answer.", **run):
    from evidex.tools.qa import PaperQuestion

    q = PaperQuestion(id="q1", question=question, answer_format=answer_format, pdf_ids=[paper_id])
    return graph.invoke({"input": q}, **run)["prediction"]


def test_every_action_then_a_cited_answer(store):
    from evidex.tools.calc import calc_observation

    store_dir, paper_id, pages = store
    script = Script(turns=[
        {"action": "search", "thought": "find passages", "query": "tables", "table": "chunks",
         "column": "text_content", "filter": f"pdf_id == '{paper_id}'", "limit": 3, "mode": "bm25"},
        {"action": "sql", "thought": "count pages", "sql": f"SELECT num_pages FROM metadata WHERE paper_id = '{paper_id}'"},
        {"action": "calculate", "thought": "check", "expression": f"{pages} * 1"},
        {"action": "view_image", "thought": "look", "paper_id": paper_id, "page_number": 1, "bounding_box": []},
        {"action": "answer", "thought": "done", "answer": "see the evidence",
         "citations": [{"pdf_id": paper_id, "page_number": 1, "source": "metadata"},
                       {"pdf_id": paper_id, "page_number": 999}]},
    ], answers=[MISS, str(pages)])
    pred = ask(graph_for(script.llm(), store_dir), paper_id)
    # the answer is written from what the turns found; the answer action's citations are kept
    assert pred.answer == str(pages) and pred.no_answer is None and pred.reader == "model"
    assert pred.actions == ["search", "sql", "calculate", "view_image", "answer"] and pred.turns == 5
    assert [c.exists for c in pred.citations] == [True, False]  # page 999 is not in the store
    turns = script.turn_prompts
    assert f"'{paper_id}'" in turns[0] and "[Database schema" in turns[0]  # scope and schema in the first turn
    assert "results (bm25)" in turns[1] and "[chunks." in turns[1]  # the search's typed passages, rendered
    assert '"num_pages": ' in turns[2]  # the SQL observation reached the next turn
    assert f"[Observation]:\n{calc_observation(f'{pages} * 1')}" in turns[3]
    assert f"[Image] page 1 of paper {paper_id}" in turns[4]
    # the answer call reads what the turns found: the SQL rows and the calculator's value among them
    last = script.answer_prompts[-1]
    assert '"num_pages": ' in last and calc_observation(f"{pages} * 1") in last


def test_tool_errors_and_unreadable_replies_come_back_as_observations(store):
    store_dir, paper_id, _ = store
    script = Script(turns=[
        {"action": "sql", "sql": "DELETE FROM pages"},                      # refused: read-only
        {"action": "search", "query": "x", "table": "chunks", "column": "text_content", "filter": "pdf_id ==="},
        "this is not JSON", "still not JSON",                                # one reply + its repair
        {"action": "answer", "answer": "unknown"},
    ], answers=[MISS, "unknown"])
    pred = ask(graph_for(script.llm(), store_dir), paper_id)
    assert pred.answer == "unknown" and pred.actions == ["sql", "search", "invalid", "answer"]
    turns = script.turn_prompts
    assert "[Refused]" in turns[1] or "[Error]" in turns[1]
    assert "[Error]" in turns[2]  # the bad filter
    assert "not a valid action" in turns[-1]


def test_without_a_readable_answer_the_turn_limit_gives_an_explicit_no_answer(store):
    """The last turn answers from what was found; when that answer is unreadable too (and no answer action came),
    the prediction says the turns ran out: never the last observation."""
    store_dir, paper_id, _ = store
    script = Script(turns=[{"action": "sql", "sql": f"SELECT count(*) + {n} FROM pages"} for n in range(2)],
                    answers=[MISS, Raw("not JSON"), Raw("not JSON either")])
    pred = ask(graph_for(script.llm(), store_dir, "qa.max_turns=3"), paper_id)
    assert pred.answer is None and pred.actions == ["sql", "sql"] and pred.citations == []
    assert pred.no_answer == "No answer: the agent used all 3 turns without answering."


def test_the_last_turn_answers_from_what_was_found(store):
    """qa.max_turns=3: two actions, then no third action call at all: the last turn is the answer call over the
    evidence of the first two."""
    from evidex.agents.neusym_policy import turn_schema

    store_dir, paper_id, _ = store
    script = Script(turns=[{"action": "sql", "sql": "SELECT 1 AS one"}, {"action": "sql", "sql": "SELECT 2 AS two"}],
                    answers=[MISS, "2"])
    pred = ask(graph_for(script.llm(), store_dir, "qa.max_turns=3"), paper_id)
    assert pred.answer == "2" and pred.actions == ["sql", "sql", "answer"] and pred.turns == 3
    assert len(script.turn_prompts) == 2 and len(script.answer_prompts) == 2
    assert '{"one": 1}' in script.answer_prompts[-1] and '{"two": 2}' in script.answer_prompts[-1]
    assert "discriminator" not in turn_schema(()).model_json_schema()["properties"]["step"]  # answer only


class Overflowing(Script):
    """A model whose context holds at most ``fits`` observations: a longer turn prompt is rejected the way the
    llama.cpp server rejects it."""

    def __init__(self, fits: int, **kw):
        super().__init__(**kw)
        self.fits, self.rejected = fits, 0

    def __call__(self, prompt: str) -> str:
        if ANSWER_CALL not in prompt and prompt.count("[Observation]") > self.fits:
            self.rejected += 1
            raise RuntimeError("Error code: 400 - {'error': {'code': 400, 'message': 'request (8240 tokens) exceeds "
                               "the available context size (8192 tokens), try increasing it', "
                               "'type': 'exceed_context_size_error'}}")
        return super().__call__(prompt)


def test_a_turn_too_long_for_the_context_is_sent_again_with_fewer_turns_of_history(store):
    """Each observation is cut to qa.observation_chars, but several of them can still overflow the model's context
    (a real run: 8,240 tokens against 8,192, recorded as an error). The turn is sent again showing fewer turns;
    when not even the last one fits, the answer node answers from what the turns found."""
    store_dir, paper_id, _ = store
    script = Overflowing(2, turns=[{"action": "sql", "sql": "SELECT 1 AS one"}, {"action": "sql", "sql": "SELECT 2 AS two"},
                                   {"action": "answer", "answer": "2"}], answers=[MISS, "2"])
    pred = ask(graph_for(script.llm(), store_dir, "qa.window=5"), paper_id)
    assert pred.answer == "2" and pred.actions == ["sql", "sql", "answer"] and script.rejected == 1
    assert script.turn_prompts[-1].count("[Observation]") == 2 and '{"two": 2}' in script.turn_prompts[-1]
    # nothing fits: no turn is taken, and the answer call reads the probe
    script = Overflowing(0, turns=[], answers=[MISS, "7"])
    pred = ask(graph_for(script.llm(), store_dir, "qa.window=2"), paper_id)
    assert pred.answer == "7" and script.rejected == 1 and script.turn_prompts == []


def test_the_answer_reads_what_the_turns_found_even_after_a_long_probe(store):
    """The answer call's context is cut to qa.evidence_chars: what the turns looked up (here the SQL rows) must
    survive the cut, not only the probe that came before them (the probe alone may fill the limit: a real paper's
    eight passages did, at the default 6,000 characters)."""
    store_dir, paper_id, pages = store
    script = Script(turns=[{"action": "sql", "sql": f"SELECT num_pages FROM metadata WHERE paper_id = '{paper_id}'"},
                           {"action": "answer", "answer": str(pages)}], answers=[MISS, str(pages)])
    ask(graph_for(script.llm(), store_dir, "qa.evidence_chars=500"), paper_id)
    assert "[cut:" in script.answer_prompts[-1]  # the probe alone is longer than the limit
    assert f'"num_pages": {pages}' in script.answer_prompts[-1]


def test_long_observations_are_cut_with_a_note(store):
    from evidex.agents.qa.render import truncate

    store_dir, paper_id, _ = store
    script = Script(turns=[{"action": "sql", "sql": "SELECT page_content FROM pages"},
                           {"action": "answer", "answer": "x"}], answers=[MISS, "x"])
    ask(graph_for(script.llm(), store_dir, "qa.observation_chars=300"), paper_id)
    assert "more characters; ask a narrower query]" in script.turn_prompts[1]
    assert truncate("abc", 10) == "abc"


def test_ablations_restrict_the_action_schema():
    from evidex.agents.neusym_policy import turn_schema

    only_search = turn_schema(("search",)).model_json_schema()
    names = set(only_search["properties"]["step"]["discriminator"]["mapping"])
    assert names == {"search", "answer"}
    only_sql = turn_schema(("sql",)).model_json_schema()
    assert set(only_sql["properties"]["step"]["discriminator"]["mapping"]) == {"sql", "answer"}


def test_a_repeated_action_is_not_run_again(store):
    """The same action twice gets a warning instead of a rerun, and that action type is withheld for a turn (a model
    at temperature 0 would otherwise repeat itself to the turn limit)."""
    store_dir, paper_id, _ = store
    same = {"action": "sql", "thought": "try", "sql": "SELECT no_such_column FROM metadata"}
    script = Script(turns=[same, same, same, same, {"action": "answer", "answer": "x"}], answers=[MISS, "x"])
    pred = ask(graph_for(script.llm(), store_dir), paper_id)
    assert pred.actions == ["sql", "sql", "invalid", "answer"]  # the third sql did not fit the narrowed schema
    assert "[Error]" in script.turn_prompts[1] and "already took this exact action at turn 1" in script.turn_prompts[2]


def test_hostile_actions_are_refused_as_observations(store, tmp_path):
    """Actions a model might write to escape: every one comes back as an observation, nothing leaves the store."""
    store_dir, paper_id, _ = store
    target = tmp_path / "leak.csv"
    hostile = [
        {"action": "sql", "sql": f"COPY (SELECT * FROM metadata) TO '{target}'"},
        {"action": "sql", "sql": "ATTACH '/tmp/other.db' AS other"},
        {"action": "sql", "sql": "SELECT * FROM read_csv('/etc/passwd')"},
        {"action": "sql", "sql": "SELECT 1; DROP TABLE pages"},
        {"action": "search", "query": "x", "table": "chunks", "column": "text_content",
         "filter": "pdf_id == '' or 1==1) ; drop table pages --", "mode": "bm25"},
        {"action": "search", "query": "x", "table": "secrets", "column": "password"},
        {"action": "calculate", "expression": "__import__('os').system('touch /tmp/pwned')"},
        {"action": "calculate", "expression": "9**9**9**9"},
        {"action": "view_image", "paper_id": "../../etc/passwd", "page_number": 9999},
        "{\"step\": {\"action\": \"sql\", \"sql\": " + json.dumps("x" * 5000) + "}}",  # over the schema's max length
        "{\"step\": {\"action\": \"sql\", \"sql\": " + json.dumps("x" * 5000) + "}}",  # its repair, also too long
        {"action": "answer", "answer": "done"},
    ]
    script = Script(turns=hostile, answers=[MISS, "done"])
    pred = ask(graph_for(script.llm(), store_dir, "qa.max_turns=20"), paper_id)
    assert pred.answer == "done" and pred.actions[-2:] == ["invalid", "answer"] and len(pred.actions) == 11
    assert not target.exists()
    assert all(("[Refused]" in p or "[Error]" in p) for p in script.turn_prompts[1:10])
    from evidex.tools.store import connect_readonly, store_paths

    con = connect_readonly(store_paths(None, store_dir).db).cursor()
    assert con.execute("SELECT count(*) FROM pages").fetchone()[0] > 0  # nothing was dropped


def test_the_probe_is_the_first_observation_not_a_model_turn(store):
    """Before the first turn the probe looks up the paper's metadata and the passages matching the question; the
    turns see it as the first observation; a whole search leaves the prediction undegraded."""
    store_dir, paper_id, _ = store
    script = Script(turns=[{"action": "answer", "answer": "x"}], answers=[MISS, "x"])
    pred = ask(graph_for(script.llm(), store_dir), paper_id, question="Which table reports the results?")
    assert pred.actions == ["answer"] and pred.turns == 1  # the probe is not a model turn
    first = script.turn_prompts[0]
    assert '"action": "probe"' in first and "[Observation]:" in first
    assert f"[metadata {paper_id}] title: Synthetic Evidence Paper About Tables" in first and "[chunks." in first
    assert pred.degraded == []
    # the early answer had the same look-up as its context, without store keys and ids
    early = script.answer_prompts[0]
    assert "[metadata] title: Synthetic Evidence Paper About Tables" in early and "[page " in early
    assert "[chunks." not in early and paper_id not in early


def test_the_answer_is_typed_by_its_format(store):
    """An integer format makes the answer an integer under the grammar, in the agent's answer action and in the
    answer call alike: a word is a schema error shown to the model (then repaired), and the number comes out as
    the text the evaluator reads."""
    store_dir, paper_id, pages = store
    from evidex.agents.neusym_policy import turn_schema

    schema = turn_schema(("sql",), int).model_json_schema()
    assert "integer" in json.dumps(schema)
    script = Script(turns=[{"action": "answer", "answer": "strings"}, {"action": "answer", "answer": pages}],
                    answers=[999, "strings", pages])
    pred = ask(graph_for(script.llm(), store_dir), paper_id, answer_format="An integer.")
    assert pred.answer == str(pages) and pred.turns == 1  # the repairs happen inside the turn
    assert "Your previous reply was not valid" in script.turn_prompts[1]
    assert "Your previous reply was not valid" in script.answer_prompts[-1]
    # a list format: the action's typed list stands when the answer call gives nothing readable
    listed = Script(turns=[{"action": "answer", "answer": ["A", "B"]}],
                    answers=[["not", "here"], Raw("not JSON"), Raw("not JSON either")])
    pred = ask(graph_for(listed.llm(), store_dir), paper_id, question="Which matrices?",
               answer_format="A Python list of strings.")
    assert pred.answer == '["A", "B"]' and pred.reader == "agent"


def test_native_tool_calling_for_hosted_models(store):
    """qa.tool_calling=native: the actions are offered as tools (no `action` field: the tool name is it) and the
    model's tool call is the turn; an unknown tool or bad arguments is an error observation, not a crash."""
    from evidex.agents.neusym_policy import action_classes, action_tool

    store_dir, paper_id, pages = store
    tool = action_tool("sql", action_classes(("sql",))["sql"])
    assert tool["function"]["name"] == "sql" and "action" not in tool["function"]["parameters"]["properties"]
    # (a scripted tool-calling model replies with a tool call to the answer calls too, which is no answer: the
    # early answer misses and the answer action's own answer stands)
    script = Script(native=True, answers=[MISS, MISS, "x", "x"], turns=[
        {"tool": "shell", "args": {"cmd": "ls"}},
        {"tool": "sql", "args": {"sql": 42}},
        {"tool": "sql", "args": {"thought": "count", "sql": f"SELECT num_pages FROM metadata WHERE paper_id = '{paper_id}'"}},
        {"tool": "answer", "args": {"answer": str(pages), "citations": [{"pdf_id": paper_id, "page_number": 1}]}},
    ])
    pred = ask(graph_for(script.llm(), store_dir, "qa.tool_calling=native"), paper_id)
    assert pred.answer == str(pages) and pred.actions == ["invalid", "invalid", "sql", "answer"]
    assert "unknown tool 'shell'" in script.turn_prompts[1] and "num_pages" in script.turn_prompts[3]
    assert [(c.page_number, c.exists) for c in pred.citations] == [(1, True)]


def test_a_repeated_search_shows_its_next_hits(store):
    """A search asked again pages on (the model still reads further), and the answer call reads every hit shown."""
    store_dir, paper_id, _ = store
    search = {"action": "search", "query": "the results of the method", "table": "chunks", "column": "text_content",
              "filter": None, "limit": 1, "mode": "bm25"}
    script = Script(turns=[search, search, {"action": "answer", "answer": "x"}], answers=[MISS, "from the evidence"])
    pred = ask(graph_for(script.llm(), store_dir), paper_id)
    assert pred.answer == "from the evidence" and pred.actions == ["search", "search", "answer"]
    assert "[More results of the same search, after the first 1]" in script.turn_prompts[2]
    first, second = (set(CHUNK.findall(p.split("[Observation]:\n")[-1])) for p in script.turn_prompts[1:3])
    assert len(first) == len(second) == 1 and first != second  # the next hit, not the same one again
    hits = [p.split("[Observation]:\n")[-1].split("] ", 1)[1][:80] for p in script.turn_prompts[1:3]]
    assert all(hit in script.answer_prompts[-1] for hit in hits)


def test_iterative_rag_keeps_every_search_on_the_question_s_papers(store):
    """qa.method=iterative_rag: the probe makes no look-ups (passages only), an answer read from its passages
    cites them, and the agent's searches go to the question's papers' passages whatever table or filter it
    names."""
    store_dir, paper_id, _ = store
    early = Script(answers=["pangolin"])
    pred = ask(graph_for(early.llm(), store_dir, task="airqa/iterative_rag"), paper_id,
               question="On which benchmark are the systems evaluated?")
    assert pred.answer == "pangolin" and pred.turns == 1 and pred.actions == ["answer"]
    assert pred.citations and all(c.source.startswith("chunks.") and c.exists for c in pred.citations)
    assert "[metadata" not in early.answer_prompts[0]  # no look-ups: passages only

    anywhere = {"action": "search", "query": "pangolin", "table": "images", "column": "image_caption",
                "filter": None, "limit": 5, "mode": "bm25"}
    script = Script(turns=[anywhere, {"action": "answer", "answer": "x"}], answers=[MISS, "x"])
    ask(graph_for(script.llm(), store_dir, task="airqa/iterative_rag"), paper_id, question="What is studied?")
    observed = script.turn_prompts[1].split("[Observation]:\n")[-1]
    assert "[chunks." in observed and "[images." not in observed
    assert all(f", {paper_id} page" in line for line in observed.split("\n") if line.startswith("[chunks."))


def test_a_title_answer_is_written_as_the_store_spells_it(store):
    """Retrieval questions are scored by title similarity: the agent's near-miss title becomes the stored one,
    and the model's own words stay in raw_answer."""
    from evidex.tools.paperstore import PaperStore

    store_dir, paper_id, _ = store
    (paper,) = PaperStore(None, store_dir).papers([paper_id])
    said = f"The paper is: {paper.title.lower().rstrip('.')}."
    script = Script(turns=[{"action": "answer", "answer": said}], answers=[MISS, said])
    pred = ask(graph_for(script.llm(), store_dir), paper_id, question="Which paper is this?",
               answer_format="Your answer should be the title of the paper WITHOUT ANY EXPLANATION.")
    assert pred.answer == paper.title and pred.raw_answer == said
    other = Script(turns=[{"action": "answer", "answer": said}], answers=[MISS, said])
    kept = ask(graph_for(other.llm(), store_dir), paper_id, answer_format="A short answer.")
    assert kept.answer == said and kept.raw_answer is None  # only a title format is snapped


def test_store_titles_are_read_again_after_the_store_changes(tmp_path, fake_embeddings):
    """The web page's store outlives an upload: a paper ingested after the first title lookup is known to the next."""
    from pdfgen_helpers import make_paper_pdf

    from evidex.tools.ingest import ingest
    from evidex.tools.paperstore import PaperStore

    (tmp_path / "in").mkdir()
    make_paper_pdf(tmp_path / "in" / "first.pdf", "A First Study of Quokkas", seed=3)
    store = tmp_path / "store"
    ingest([tmp_path / "in" / "first.pdf"], store_dir=store, embeddings=fake_embeddings, progress=False)
    papers = PaperStore(None, str(store))
    assert list(papers.titles().values()) == ["A First Study of Quokkas"]
    make_paper_pdf(tmp_path / "in" / "second.pdf", "A Second Study of Wombats", seed=4)
    ingest([tmp_path / "in" / "second.pdf"], store_dir=store, embeddings=fake_embeddings, progress=False)
    assert sorted(papers.titles().values()) == ["A First Study of Quokkas", "A Second Study of Wombats"]
    # a question that quotes a paper's whole title is about that paper (evidex ask scopes it so without --paper)
    wombats = next(pid for pid, title in papers.titles().items() if "Wombats" in title)
    assert papers.papers_named_in('In Table 2 of the paper "A second study of wombats", what is the F1?') == [wombats]
    assert papers.papers_named_in("In Table 2 of the paper A Second Study of Wombats, what is the F1?") == []
    assert papers.papers_named_in('Which paper is about "A Study of Wombats"?') == []  # not the whole title
    assert papers.papers_named_in("In 'A second study of wombats', what is the F1?") == [wombats]  # single quotes


# ------------------------------------------------------------------------------------------------ settings per run
def test_one_compiled_graph_reads_its_settings_per_run(store):
    """The server changes qa settings per run (LangGraph context, or configurable for older clients) without
    building the graph again, and a run's settings do not outlive it; the method and unknown settings are refused
    with a message naming the key."""
    from evidex.agents.scripted import ScriptedChatModel
    from evidex.graphs.settings import SettingRefused

    store_dir, paper_id, _ = store
    scripts: list[Script] = []

    def reply(prompt: str) -> str:  # each run gets a fresh script: ten SQL turns, a missed early answer, an answer
        return scripts[-1](prompt)

    graph = graph_for(ScriptedChatModel(responses=reply), store_dir, "qa.max_turns=4")

    def run(**how):
        scripts.append(Script(turns=[{"action": "sql", "sql": f"SELECT {n} AS n"} for n in range(10)],
                              answers=[MISS, "x"]))
        return ask(graph, paper_id, **how).actions

    assert run() == ["sql", "sql", "sql", "answer"]  # the config's 4 turns
    assert run(context={"qa": {"max_turns": 2}}) == ["sql", "answer"]
    assert "at most 2 turns" in scripts[-1].turn_prompts[0]  # the prompt says the run's limit
    assert run() == ["sql", "sql", "sql", "answer"]  # the next run is the config's again
    assert run(config={"configurable": {"qa.max_turns": 3}}) == ["sql", "sql", "answer"]
    # the answer readers per run: a reader that does not exist is refused, as are the method and unknown keys
    with pytest.raises(SettingRefused, match="unknown answer reader"):
        run(context={"qa": {"readers": ["nope"]}})
    with pytest.raises(SettingRefused, match="qa.method"):
        run(context={"qa": {"method": "classic_rag"}})
    with pytest.raises(SettingRefused, match="unknown setting 'qa.warm_start'"):
        run(context={"qa": {"warm_start": "chunks"}})


# ------------------------------------------------------------------------------------------------ typed steps
def _question(paper_id: str):
    from evidex.tools.qa import PaperQuestion
    from evidex.tools.qa.question import parse_question

    return parse_question(PaperQuestion(id="s", question="How many pages?", pdf_ids=[paper_id]))


def test_actions_run_as_typed_steps_and_never_raise(store):
    from evidex.agents.neusym_policy import (CalculateExpr, ParseFailure, RetrieveFromDatabase,
                                             RetrieveFromVectorstore)
    from evidex.agents.neusym_steps import REPEAT_WARNING, observation_text, run_action
    from evidex.tools.paperstore import PaperStore

    store_dir, paper_id, pages = store
    papers, q = PaperStore(None, store_dir), _question(paper_id)
    sql = run_action(papers, RetrieveFromDatabase(action="sql", thought="t", sql=(
        f"SELECT num_pages FROM metadata WHERE paper_id = '{paper_id}'")), q)
    assert sql.observation.kind == "sql" and sql.observation.rows.columns == ["num_pages"]
    assert sql.observation.rows.rows == [[pages]] and not sql.observation.failed
    assert observation_text(sql.observation) == f'{{"num_pages": {pages}}}\nIn total, 1 rows are displayed.'
    assert sql.summary() == "Queried the database: 1 rows"
    search = run_action(papers, RetrieveFromVectorstore(action="search", thought="t", query="the results of the method",
                                                        table="chunks", column="text_content", filter=None,
                                                        limit=1, mode="bm25"), q)
    passages = search.observation.context.items
    assert search.observation.kind == "search" and len(passages) == 1
    assert all(p.kind == "passage" and p.page >= 1 and p.source.startswith("chunks.") for p in passages)
    assert observation_text(search.observation).startswith(f"{len(passages)} results (bm25), most relevant first:")
    calc = run_action(papers, CalculateExpr(action="calculate", thought="t", expression="74.9 - 61.2"), q)
    assert (calc.observation.kind, calc.observation.value) == ("calculate", "13.7")
    # errors, refusals and unreadable replies are observations the model reads
    refused = run_action(papers, RetrieveFromDatabase(action="sql", thought="t", sql="DELETE FROM pages"), q)
    assert refused.observation.failed and refused.observation.message.startswith("[Refused]")
    bad = run_action(papers, CalculateExpr(action="calculate", thought="t", expression="import os"), q)
    assert bad.observation.kind == "error" and bad.observation.message.startswith("[Error]")
    # the instructions' own example, copied (the 1.5B model did, then answered its 3.338...): refused, not computed
    from evidex.agents.neusym_policy import task_prompt
    from evidex.tools.calc import EXAMPLE_EXPRESSION
    assert f'"expression": "{EXAMPLE_EXPRESSION}"' in task_prompt("q", "f", "s", "", ("calculate",), 6)[0].content
    copied = run_action(papers, CalculateExpr(action="calculate", thought="t", expression=" (71.2-68.9)/68.9*100"), q)
    assert copied.observation.kind == "error" and "the example expression" in copied.observation.message
    broken = run_action(papers, ParseFailure(error="no JSON"), q)
    assert "not a valid action (no JSON)" in observation_text(broken.observation)
    # an action taken before is not run again; a repeated search pages on
    again = run_action(papers, sql.action.model_copy(update={"thought": "again"}), q, earlier=[sql, search])
    assert again.observation.kind == "repeat" and again.observation.message.startswith(REPEAT_WARNING)
    assert "at turn 1" in again.observation.message
    more = run_action(papers, search.action, q, earlier=[search])
    assert more.observation.skipped == 1 and not {p.key for p in more.observation.context.items} & {
        p.key for p in passages}


def test_history_messages_and_evidence_are_rendered_from_typed_steps(store):
    from langchain_core.messages import AIMessage, HumanMessage

    from evidex.agents.neusym_policy import CalculateExpr, RetrieveFromDatabase
    from evidex.agents.neusym_steps import (Observation, ProbeAction, Step, evidence, history_messages,
                                            observation_text, run_action)
    from evidex.tools.paperstore import PaperStore
    from evidex.tools.qa.context import Context
    from evidex.tools.qa.probe import probe

    store_dir, paper_id, _ = store
    papers, q = PaperStore(None, store_dir), _question(paper_id)
    looked_up = Step(action=ProbeAction(), observation=Observation(kind="probe", context=probe(papers, q, 0)))
    steps = [looked_up]
    for n, expression in enumerate(["1 + 1", "2 * 3", "1 / 0"]):
        steps.append(run_action(papers, CalculateExpr(action="calculate", thought=f"t{n}", expression=expression), q))
    steps.append(run_action(papers, RetrieveFromDatabase(action="sql", thought="t", sql="SELECT 7 AS seven"), q))
    messages = history_messages(steps, window=2, limit=60)
    assert len(messages) == 5 and isinstance(messages[0], HumanMessage) and "3 earlier turns" in messages[0].content
    assert isinstance(messages[1], AIMessage) and json.loads(messages[1].content) == {
        "thought": "t2", "action": "calculate", "expression": "1 / 0"}
    assert messages[2].content.startswith("[Observation]:\n[Error]")
    assert messages[4].content == '[Observation]:\n{"seven": 7}\nIn total, 1 rows are displayed.'
    # observations are cut to the limit with a note
    first = history_messages(steps[:1], window=5, limit=60)[1].content
    assert first.startswith(f"[Observation]:\n[metadata {paper_id}]") and "more characters; ask a narrower" in first
    assert observation_text(looked_up.observation) == observation_text(looked_up.observation, None)
    # what the turns found, as one typed context: the probe's items, the values and rows; failed steps left out
    found = evidence(steps)
    assert [i.kind for i in found.items] == ["note", "note", "rows", "paper"]  # the turns first, the probe last
    assert [i.text for i in found.items if i.kind == "note"] == ["The calculated result is: 2",
                                                                 "The calculated result is: 6"]
    assert evidence([]) == Context()
    assert steps[1].summary() == "Calculated 1 + 1: 2" and looked_up.summary().endswith("1 paper record")
