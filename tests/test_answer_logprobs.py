"""Reading how likely the model was to abstain from its reply's token log-probabilities
(agents.answer_logprobs.start_probability), on hand-made OpenAI-style logprob lists."""
from __future__ import annotations

import math

import pytest
from langchain_core.messages import AIMessage

from evidex.agents.answer_logprobs import start_probability


def reply(tokens: list[tuple[str, dict[str, float]]]) -> AIMessage:
    """tokens: (chosen token, {alternative: probability}); the chosen one's probability is its alternative's."""
    content = [{"token": tok, "logprob": math.log(alts.get(tok, 1.0)),
                "top_logprobs": [{"token": a, "logprob": math.log(p)} for a, p in alts.items()]}
               for tok, alts in tokens]
    return AIMessage(content="".join(t for t, _ in tokens), response_metadata={"logprobs": {"content": content}})


def test_the_mass_of_alternatives_that_begin_the_word_at_the_value_start():
    msg = reply([('{"', {}), ("answer", {}), ('":', {}), (' "', {}), ("Bi", {"Bi": 0.5, "Un": 0.3, "Unanswer": 0.1,
                                                                           "U": 0.05}), ("LSTM", {}), ('"}', {})])
    assert start_probability(msg, "answer", "Unanswerable") == pytest.approx(0.4)  # "U" alone is too short


def test_a_token_that_holds_the_quote_and_the_value_start():
    """llama.cpp often merges the opening quote with the first letters: the part after the quote is compared."""
    msg = reply([('{"answer', {}), ('": "Un', {'": "Un': 0.7, '": "The': 0.2}), ("answerable", {}), ('"}', {})])
    assert start_probability(msg, "answer", "Unanswerable") == pytest.approx(0.7)


def test_a_whole_word_token_counts():
    msg = reply([('{"answer": "', {}), ("Unanswerable", {"Unanswerable": 0.9, "No": 0.1}), ('"}', {})])
    assert start_probability(msg, "answer", "Unanswerable") == pytest.approx(0.9)


@pytest.mark.parametrize("msg", [
    AIMessage(content='{"answer": "x"}'),  # no logprobs (a scripted or hosted model that gives none)
    reply([('{"answer": ', {}), ("true", {"true": 0.8, "false": 0.2}), ("}", {})]),  # not a string value
    reply([('{"quote": "', {}), ("Un", {"Un": 1.0}), ('"}', {})]),  # another field
])
def test_none_when_it_cannot_be_read(msg):
    assert start_probability(msg, "answer", "Unanswerable") is None


def test_value_confidence_reads_the_answer_tokens_only():
    from evidex.agents.answer_logprobs import value_confidence

    msg = reply([('{"answer": "', {}), ("Bi", {"Bi": 0.5, "Un": 0.5}), ("LSTM", {"LSTM": 0.25}), ('"}', {'"}': 1.0})])
    sure = value_confidence(msg, "answer")
    assert sure.first_token_p == pytest.approx(0.5)
    assert sure.mean_logprob == pytest.approx((math.log(0.5) + math.log(0.25)) / 2)  # the closing '"}' not counted


def test_the_answer_check_is_a_second_turn_of_the_same_conversation():
    """answer_from_context(check=True): after the answer, the model is asked whether the context answers the
    question, in the same conversation (the answer prompt is its prefix, so the server's prompt cache serves it);
    P(true) at the boolean is check_p. Unreadable check replies give None, never an error."""
    from evidex.agents.paper_answer import answer_from_context
    from evidex.agents.scripted import ScriptedChatModel

    def responses(prompt: str) -> str:
        return '{"answered": false}' if "Does the [Context] above answer" in prompt else '{"answer": "BiLSTM"}'

    def logprobs(text: str) -> list[dict]:
        if "answered" in text:
            return [{"token": '{"answered": ', "logprob": 0.0},
                    {"token": "false", "logprob": math.log(0.8), "top_logprobs": [
                        {"token": "false", "logprob": math.log(0.8)}, {"token": "true", "logprob": math.log(0.2)}]},
                    {"token": "}", "logprob": 0.0}]
        return [{"token": '{"answer": "', "logprob": 0.0}, {"token": "BiLSTM", "logprob": math.log(0.9)},
                {"token": '"}', "logprob": 0.0}]

    model = ScriptedChatModel(responses=responses, logprobs=logprobs)
    out = answer_from_context(model, "Which models?", "A phrase.", "", "We use a BiLSTM.",
                              abstain_word="Unanswerable", check=True)
    assert out.answer == "BiLSTM" and out.confidence.check_p == pytest.approx(0.2)
    assert out.confidence.first_token_p == pytest.approx(0.9) and out.confidence.abstain_p == 0.0
    first, second = model.prompts
    assert second.startswith(first) and "AI: {\"answer\": \"BiLSTM\"}" in second

    plain = ScriptedChatModel(responses=lambda prompt: '{"answer": "BiLSTM"}')  # no logprobs, check unreadable
    out = answer_from_context(plain, "Which models?", "A phrase.", "", "We use a BiLSTM.", check=True)
    assert out.answer == "BiLSTM" and out.confidence.check_p is None
