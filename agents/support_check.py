"""The configured model as the judge of sentence support: does the cited evidence state what the sentence says?

Issue 24 lets the support check be a small NLI model or the configured model; no NLI model ships offline
(benchmarks/results/support_judges.json), so this is the model-side candidate. One short constrained call per
sentence (a boolean under the grammar), same interface as ``tools.support_judge`` judges:
``judge(sentence, cited_texts) -> bool``.
"""
from __future__ import annotations

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from evidex.agents.claim_prompt import clip
from evidex.agents.prompts import load_prompt, render
from evidex.agents.structured import StructuredOutputError, call_structured


class SupportVerdict(BaseModel):
    supported: bool = Field(description="true only if the evidence states everything the sentence says")


def llm_judge(llm: BaseChatModel, evidence_chars: int = 700):
    """A judge that asks ``llm`` once per sentence; an unusable reply counts as not supported."""
    def judge(sentence: str, cited_texts: list[str]) -> bool:
        if not cited_texts:
            return False
        evidence = "\n".join(f"- {clip(t, evidence_chars)}" for t in cited_texts)
        messages = [SystemMessage(content=load_prompt("support_system")),
                    HumanMessage(content=render("support_check", evidence=evidence, sentence=sentence))]
        try:
            return call_structured(llm, SupportVerdict, messages, name="support_check", max_tokens=16,
                                   repair=False).supported
        except StructuredOutputError:
            return False
    return judge
