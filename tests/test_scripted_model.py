"""``scripted:<file>`` models: the by_prompt form answers each call by what its prompt contains."""
from __future__ import annotations

import json

import pytest
from langchain_core.messages import HumanMessage


def test_by_prompt_replies_by_content_the_rule_with_most_text_first(tmp_path):
    from evidex.agents.models import make_chat_model

    script = tmp_path / "replies.json"
    script.write_text(json.dumps({"by_prompt": [
        {"contains": ["What datasets do they use?"], "reply": {"answer": "any paper"}},
        {"contains": ["What datasets do they use?", "paper-2"], "reply": {"answer": "SQuAD"}},
    ], "default": "Unanswerable"}))
    llm = make_chat_model(f"scripted:{script}")
    ask = lambda text: llm.invoke([HumanMessage(content=text)]).content  # noqa: E731
    assert json.loads(ask("[Question]: What datasets do they use?\n[paper-2 page 3] ...")) == {"answer": "SQuAD"}
    assert json.loads(ask("[paper-7 page 1] ...\n[Question]: What datasets do they use?")) == {"answer": "any paper"}
    assert ask("[Question]: How many layers?") == "Unanswerable"
    assert len(llm.prompts) == 3


def test_by_prompt_without_a_default_names_the_unmatched_prompt_and_a_bad_rule_is_a_clear_error(tmp_path):
    from evidex.agents.scripted import ScriptExhaustedError, load_script

    script = tmp_path / "replies.json"
    script.write_text(json.dumps({"by_prompt": [{"contains": ["alpha"], "reply": "A"}]}))
    llm = load_script(script)
    assert llm.invoke([HumanMessage(content="alpha beta")]).content == "A"
    with pytest.raises(ScriptExhaustedError, match="no scripted rule matches the prompt: 'HUMAN: gamma'"):
        llm.invoke([HumanMessage(content="gamma")])
    script.write_text(json.dumps({"by_prompt": [{"reply": "A"}]}))
    with pytest.raises(ValueError, match='each by_prompt rule is {"contains"'):
        load_script(script)
