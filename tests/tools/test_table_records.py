"""Tables as records (tools/table_records.py): each value beside its column's full header, resolved by code."""
from __future__ import annotations

from evidex.tools.table_records import table_records

TWO_LEVEL = """|||Yelp||Amazon|
|---|---|---|---|---|
||R ↓|M ↓|R ↓|M ↓|
|PMF|1.097|0.883|1.235|0.913|
|DAML|1.014|0.784|1.173|0.858|"""


def test_a_two_level_header_names_every_value():
    header_spans = TWO_LEVEL.replace("|||Yelp||Amazon|", "||Yelp||Amazon||")
    assert table_records(header_spans).splitlines() == [
        "PMF: Yelp R ↓ = 1.097; Yelp M ↓ = 0.883; Amazon R ↓ = 1.235; Amazon M ↓ = 0.913",
        "DAML: Yelp R ↓ = 1.014; Yelp M ↓ = 0.784; Amazon R ↓ = 1.173; Amazon M ↓ = 0.858"]


def test_group_rows_missing_values_and_escaped_bars():
    md = """|Reranker|F.|S.|
|---|---|---|
|No reranking|-1.23|-0.97|
|Ours|||
|LaBSE|−0.07|–|
|A \\| B|0.5|0.6|"""
    assert table_records(md).splitlines() == ["No reranking: F. = -1.23; S. = -0.97", "Ours",
                                              "LaBSE: F. = −0.07; S. = –", "A | B: F. = 0.5; S. = 0.6"]


def test_what_is_not_a_table_of_values_stays_markdown():
    assert table_records("|Datasets Yelp Amazon|\n|---|\n|Number of users 27,147 157,212|") is None  # one column
    assert table_records("|Task|Input|\n|---|---|\n|CQA|Where can mushrooms be kept?|") is None  # no values
    assert table_records("|A|1|\n|B|2|") is None  # no header above the values
    assert table_records("") is None and table_records("prose, not a table") is None
    assert table_records("|Metric|AUC|\n|---|---|\n|LaBSE|91.7|") is None  # one row: nothing to resolve
