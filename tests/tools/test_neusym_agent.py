"""The NeuSym agent loop with a scripted model over a real (synthetic-PDF) store: every action, tool errors as
observations, malformed replies, citations checked against the store, and the turn limit's explicit no-answer."""
from __future__ import annotations

import json

import pytest


def scripted(replies):
    """A scripted model replying with ``replies`` in order (dicts become ``{"step": ...}`` JSON, with a thought
    when they have none)."""
    from evidex.agents.scripted import ScriptedChatModel

    return ScriptedChatModel(responses=[r if isinstance(r, str) else json.dumps({"step": {"thought": "next", **r}})
                                        for r in replies])


@pytest.fixture(scope="module")
def store(synthetic_store):
    store_dir, report = synthetic_store
    paper = next(f for f in report.files if f.status == "ingested")
    return str(store_dir), paper.paper_id, paper.pages


def graph_for(llm, store_dir, **settings):
    from evidex.graphs.qa.neusym import NeuSymSettings, build_neusym

    return build_neusym(llm, NeuSymSettings(store_dir=store_dir, **settings))


def ask(graph, paper_id, question="How many pages does the paper have?", answer_format="A short answer."):
    from evidex.tools.qa import PaperQuestion

    q = PaperQuestion(id="q1", question=question, answer_format=answer_format, pdf_ids=[paper_id])
    return graph.invoke({"input": q}, config={"recursion_limit": 100})["prediction"]


def test_every_action_then_a_cited_answer(store):
    from evidex.tools.calc import calc_observation

    store_dir, paper_id, pages = store
    llm = scripted([
        {"action": "search", "thought": "find passages", "query": "tables", "table": "chunks",
         "column": "text_content", "filter": f"pdf_id == '{paper_id}'", "limit": 3, "mode": "bm25"},
        {"action": "sql", "thought": "count pages", "sql": f"SELECT num_pages FROM metadata WHERE paper_id = '{paper_id}'"},
        {"action": "calculate", "thought": "check", "expression": f"{pages} * 1"},
        {"action": "view_image", "thought": "look", "paper_id": paper_id, "page_number": 1, "bounding_box": []},
        {"action": "answer", "thought": "done", "answer": str(pages),
         "citations": [{"pdf_id": paper_id, "page_number": 1, "source": "metadata"},
                       {"pdf_id": paper_id, "page_number": 999}]},
    ])
    pred = ask(graph_for(llm, store_dir), paper_id)
    assert pred.answer == str(pages) and pred.no_answer is None
    assert pred.actions == ["search", "sql", "calculate", "view_image", "answer"] and pred.turns == 5
    assert [c.exists for c in pred.citations] == [True, False]  # page 999 is not in the store
    prompts = llm.prompts
    assert f"'{paper_id}'" in prompts[0] and "[Database schema" in prompts[0]  # scope and schema in the first turn
    assert "num_pages" in prompts[2]  # the SQL observation reached the next turn
    assert f"[Observation]:\n{calc_observation(f'{pages} * 1')}" in prompts[3]


def test_tool_errors_and_unreadable_replies_come_back_as_observations(store):
    store_dir, paper_id, _ = store
    llm = scripted([
        {"action": "sql", "sql": "DELETE FROM pages"},                      # refused: read-only
        {"action": "search", "query": "x", "table": "chunks", "column": "text_content", "filter": "pdf_id ==="},
        "this is not JSON", "still not JSON",                                # one reply + its repair
        {"action": "answer", "answer": "unknown"},
    ])
    pred = ask(graph_for(llm, store_dir), paper_id)
    assert pred.answer == "unknown" and pred.actions == ["sql", "search", "invalid", "answer"]
    prompts = llm.prompts
    assert "[Refused]" in prompts[1] or "[Error]" in prompts[1]
    assert "[Error]" in prompts[2]  # the bad filter
    assert "not a valid action" in prompts[-1]


def test_the_turn_limit_gives_an_explicit_no_answer(store):
    store_dir, paper_id, _ = store
    llm = scripted([{"action": "sql", "sql": f"SELECT count(*) + {n} FROM pages"} for n in range(3)])
    pred = ask(graph_for(llm, store_dir, max_turns=3, answer_on_last_turn=False), paper_id)
    assert pred.answer is None and pred.turns == 3
    assert pred.no_answer == "No answer: the agent used all 3 turns without answering."


def test_the_last_turn_may_only_answer(store):
    from evidex.agents.neusym_policy import turn_schema

    store_dir, paper_id, _ = store
    llm = scripted([{"action": "sql", "sql": "SELECT 1"}, {"action": "sql", "sql": "SELECT 2"},
                    {"action": "answer", "answer": "2", "citations": []}])
    pred = ask(graph_for(llm, store_dir, max_turns=3), paper_id)
    assert pred.answer == "2" and pred.actions == ["sql", "sql", "answer"]
    assert "This is your last turn" in llm.prompts[2] and "This is your last turn" not in llm.prompts[1]
    assert "discriminator" not in turn_schema(()).model_json_schema()["properties"]["step"]  # answer only


def test_long_observations_are_cut_with_a_note(store):
    from evidex.graphs.qa.neusym import truncate

    store_dir, paper_id, _ = store
    llm = scripted([{"action": "sql", "sql": "SELECT page_content FROM pages"}, {"action": "answer", "answer": "x"}])
    ask(graph_for(llm, store_dir, observation_chars=300), paper_id)
    assert "more characters; ask a narrower query]" in llm.prompts[1]
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
    llm = scripted([same, same, same, same, {"action": "answer", "answer": "x"}])
    pred = ask(graph_for(llm, store_dir), paper_id)
    assert pred.actions == ["sql", "sql", "invalid", "answer"]  # the third sql did not fit the narrowed schema
    assert "[Error]" in llm.prompts[1] and "already took this exact action at turn 1" in llm.prompts[2]


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
    pred = ask(graph_for(scripted(hostile), store_dir, max_turns=20), paper_id)
    assert pred.answer == "done" and pred.actions[-2:] == ["invalid", "answer"] and len(pred.actions) == 11
    assert not target.exists()
    from evidex.tools.store import connect_readonly, store_paths

    con = connect_readonly(store_paths(None, store_dir).db).cursor()
    assert con.execute("SELECT count(*) FROM pages").fetchone()[0] > 0  # nothing was dropped


def test_warm_start_shows_the_question_search_first(store):
    store_dir, paper_id, _ = store
    llm = scripted([{"action": "answer", "answer": "x"}])
    from evidex.graphs.qa.neusym import NeuSymSettings, build_neusym
    from evidex.tools.qa import PaperQuestion

    class BM25Tools:  # the synthetic store's fake embeddings cannot embed a query: search it by keywords
        def __init__(self, inner):
            self.inner = inner

        def __getattr__(self, name):
            return getattr(self.inner, name)

        def run(self, action):
            return self.inner.run({**action, "mode": "bm25"} if action.get("action") == "search" else action)

        def search_result(self, query, table, column, filter, limit, mode):
            return self.inner.search_result(query, table, column, filter, limit, "bm25")

    from evidex.graphs.qa.neusym import StoreTools

    graph = build_neusym(llm, NeuSymSettings(store_dir=store_dir, warm_start=True),
                         BM25Tools(StoreTools(None, store_dir)))
    q = PaperQuestion(id="w", question="Which table reports the results?", pdf_ids=[paper_id])
    pred = graph.invoke({"input": q})["prediction"]
    assert pred.actions == ["answer"] and pred.turns == 1  # the warm start is not a model turn
    first = llm.prompts[0]
    assert '"query": "Which table reports the results?"' in first and "[Observation]:" in first
    assert f"pdf_id in ['{paper_id}']" in first and "results (bm25)" in first


def test_the_answer_is_typed_by_its_format(store):
    """An integer format makes the answer an integer under the grammar: a word is a schema error shown to the
    model (then repaired), and the number comes out as the text the evaluator reads."""
    store_dir, paper_id, pages = store
    from evidex.agents.neusym_policy import turn_schema

    schema = turn_schema(("sql",), int).model_json_schema()
    assert "integer" in json.dumps(schema)
    llm = scripted([{"action": "answer", "answer": "strings"}, {"action": "answer", "answer": pages}])
    pred = ask(graph_for(llm, store_dir), paper_id, answer_format="An integer.")
    assert pred.answer == str(pages) and pred.turns == 1  # the repair happens inside the turn
    listed = scripted([{"action": "answer", "answer": ["A", "B"]}])
    from evidex.tools.qa import PaperQuestion

    q = PaperQuestion(id="l", question="Which matrices?", answer_format="A Python list of strings.", pdf_ids=[paper_id])
    assert graph_for(listed, store_dir).invoke({"input": q})["prediction"].answer == '["A", "B"]'


def test_native_tool_calling_for_hosted_models(store):
    """qa.tool_calling=native: the actions are offered as tools (no `action` field: the tool name is it) and the
    model's tool call is the turn; an unknown tool or bad arguments is an error observation, not a crash."""
    from evidex.agents.neusym_policy import action_classes, action_tool
    from evidex.agents.scripted import ScriptedChatModel

    store_dir, paper_id, pages = store
    tool = action_tool("sql", action_classes(("sql",))["sql"])
    assert tool["function"]["name"] == "sql" and "action" not in tool["function"]["parameters"]["properties"]
    llm = ScriptedChatModel(tool_calls=True, responses=[json.dumps(r) for r in [
        {"tool": "shell", "args": {"cmd": "ls"}},
        {"tool": "sql", "args": {"sql": 42}},
        {"tool": "sql", "args": {"thought": "count", "sql": f"SELECT num_pages FROM metadata WHERE paper_id = '{paper_id}'"}},
        {"tool": "answer", "args": {"answer": str(pages), "citations": [{"pdf_id": paper_id, "page_number": 1}]}},
    ]])
    pred = ask(graph_for(llm, store_dir, tool_calling="native"), paper_id)
    assert pred.answer == str(pages) and pred.actions == ["invalid", "invalid", "sql", "answer"]
    assert "unknown tool 'shell'" in llm.prompts[1] and "num_pages" in llm.prompts[3]


def test_a_repeated_search_shows_its_next_hits_and_the_last_turn_answers_from_evidence(store):
    """A search asked again pages on (the model still reads further); with answer_step=evidence the last turn is
    the evidence answer call itself, not an answer action followed by it."""
    store_dir, paper_id, _ = store
    search = {"action": "search", "query": "the results of the method", "table": "chunks", "column": "text_content",
              "filter": None, "limit": 1, "mode": "bm25"}
    llm = scripted([search, search, json.dumps({"answer": "from the evidence"})])
    pred = ask(graph_for(llm, store_dir, max_turns=3, answer_step="evidence"), paper_id)
    assert pred.answer == "from the evidence" and pred.actions == ["search", "search", "answer"]
    assert len(llm.prompts) == 3  # two turns and the evidence answer: no answer action on the last turn
    assert "[More results of the same search, after the first 1]" in llm.prompts[2]


def test_an_early_answer_from_the_question_search_cites_its_hits(store):
    """warm_start=chunks with early_answer (iterative RAG, the vector-only ablation): an answer read from the
    question's hits cites the hit that holds it."""
    store_dir, paper_id, _ = store
    from evidex.graphs.qa.neusym import NeuSymSettings, StoreTools, build_neusym
    from evidex.tools.qa import PaperQuestion

    class BM25Tools(StoreTools):  # the synthetic store's fake embeddings cannot embed a query
        def search_result(self, query, table, column, filter, limit, mode):
            return super().search_result(query, table, column, filter, limit, "bm25")

    llm = scripted([json.dumps({"answer": "pangolin"})])
    graph = build_neusym(llm, NeuSymSettings(store_dir=store_dir, warm_start="chunks", early_answer=True),
                         BM25Tools(None, store_dir))
    q = PaperQuestion(id="c", question="On which benchmark are the systems evaluated?", pdf_ids=[paper_id])
    pred = graph.invoke({"input": q})["prediction"]
    assert pred.answer == "pangolin" and pred.turns == 1
    assert pred.citations and all(c.source.startswith("chunks.") and c.exists for c in pred.citations)


def test_a_title_answer_is_written_as_the_store_spells_it(store):
    """Retrieval questions are scored by title similarity: the agent's near-miss title becomes the stored one,
    and the model's own words stay in raw_answer."""
    from evidex.graphs.qa.store_tools import StoreTools

    store_dir, paper_id, _ = store
    title = StoreTools(None, store_dir).titles()[0]
    said = f"The paper is: {title.lower().rstrip('.')}."
    llm = scripted([{"action": "answer", "answer": said}])
    pred = ask(graph_for(llm, store_dir), paper_id, question="Which paper is this?",
               answer_format="Your answer should be the title of the paper WITHOUT ANY EXPLANATION.")
    assert pred.answer == title and pred.raw_answer == said
    other = scripted([{"action": "answer", "answer": said}])
    kept = ask(graph_for(other, store_dir), paper_id, answer_format="A short answer.")
    assert kept.answer == said  # only a title format is snapped


def test_store_titles_are_read_again_after_the_store_changes(tmp_path, fake_embeddings):
    """The web page's tools outlive an upload: a paper ingested after the first title lookup is known to the next."""
    from pdfgen_helpers import make_paper_pdf

    from evidex.graphs.qa.store_tools import StoreTools
    from evidex.tools.ingest import ingest

    (tmp_path / "in").mkdir()
    make_paper_pdf(tmp_path / "in" / "first.pdf", "A First Study of Quokkas", seed=3)
    store = tmp_path / "store"
    ingest([tmp_path / "in" / "first.pdf"], store_dir=store, embeddings=fake_embeddings, progress=False)
    tools = StoreTools(None, str(store))
    assert tools.titles() == ["A First Study of Quokkas"]
    make_paper_pdf(tmp_path / "in" / "second.pdf", "A Second Study of Wombats", seed=4)
    ingest([tmp_path / "in" / "second.pdf"], store_dir=store, embeddings=fake_embeddings, progress=False)
    assert sorted(tools.titles()) == ["A First Study of Quokkas", "A Second Study of Wombats"]
