"""benchmarks.scale: QASPER train markdown becomes sections and paragraphs the QASPER writer stores, the paper plan
is nested (each size a prefix of the next) with replicas under new ids, and the baseline search code loads from git."""
from __future__ import annotations

import pytest

from benchmarks.scale import markdown_paper

MD = """# A Title

**Paper ID:** 1234.5678

## Abstract

We study things.

## Introduction

First paragraph.

Second paragraph.

### Details

Nested paragraph.

## Results

Final words.
"""


def test_markdown_paper_sections_and_abstract():
    p = markdown_paper("1234.5678", "A Title", MD)
    assert p.abstract == "We study things."
    assert [(s.name, s.paragraphs) for s in p.sections] == [
        ("Introduction", ["First paragraph.", "Second paragraph."]),
        ("Introduction ::: Details", ["Nested paragraph."]),
        ("Results", ["Final words."]),
    ]
    from evidex.tools.ingest.qasper import paper_records

    rec = paper_records(p)
    assert [c.text for c in rec.chunks][:2] == ["We study things.", "First paragraph."]


@pytest.mark.shared_data
def test_paper_plan_is_nested_with_new_ids_past_the_data():
    from benchmarks.scale import find_corpus, paper_plan

    corpus = find_corpus()
    small, big = paper_plan(60, corpus), paper_plan(1300, corpus)
    assert [k for k, _ in small[:58]] == ["pdf"] * 58 and len(small) == 60
    key = lambda item: str(item[1]) if item[0] == "pdf" else item[1].paper_id  # noqa: E731
    assert [key(x) for x in small] == [key(x) for x in big[:60]]
    ids = [x[1].paper_id for x in big if x[0] == "qasper"]
    assert len(ids) == len(set(ids)) == 1300 - 58 and any(i.endswith("-copy1") for i in ids)


def test_baseline_search_module_loads_from_git():
    import subprocess

    from benchmarks.scale import baseline_search_module

    try:
        subprocess.run(["git", "cat-file", "-e", "bdf8d9f"], check=True, capture_output=True)
    except (subprocess.CalledProcessError, FileNotFoundError):
        pytest.skip("baseline commit not in this clone")
    search, store = baseline_search_module("bdf8d9f")
    assert hasattr(search, "SearchEngine") and hasattr(store, "StorePaths")
