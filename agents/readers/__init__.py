"""Answer readers: small plug-ins that each read one shape of answer from a typed context, tried in the order the
config lists them (``qa.readers``; the model last). The first answer wins; a reader that does not apply, or finds
no answer for sure, passes.

    from evidex.agents.readers import read_answer
    answer = read_answer(["model"], request)

The built-in readers are ``cell`` (a number the question names by table, row and column, read by code:
:mod:`agents.readers.cell`), ``count`` (rows past a bound), ``wins`` (the columns one row beats another on),
``against`` (the rows that beat one reference row), ``affiliation`` (where a named author is), ``gap`` (the
difference of two rows), ``each_paper`` (one value from each of two named papers, read one paper at a time) and
``model`` (:mod:`agents.readers.model`). A new reader is one module (a
class with ``name``, ``applies`` and ``read``; see :mod:`agents.readers.base`) registered with
:func:`register_reader`, plus its name in the config's list before ``model`` (``qa.readers: [mine, model]``); see
docs/question-answering.md.
"""
from __future__ import annotations

from evidex.agents.readers.base import Reader, ReadRequest, get_reader, reader_names, register_reader
from evidex.agents.readers.checks import rejects

DEFAULT_READERS = ("cell", "count", "wins", "against", "gap", "affiliation", "each_paper", "model")


def read_answer(names, request: ReadRequest):
    """The first answer a reader of ``names`` gives (:class:`tools.qa.context.Answer`), or None."""
    for name in names:
        reader = get_reader(name)
        if reader.applies(request.question, request.context):
            answer = reader.read(request)
            if answer is not None:
                return answer
    return None


__all__ = ["DEFAULT_READERS", "ReadRequest", "Reader", "get_reader", "read_answer", "reader_names",
           "register_reader", "rejects"]
