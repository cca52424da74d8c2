"""Reading QASPER (tools.qasper_data): the official JSON layout and the Hugging Face layout (JSON lines, a JSON list,
parquet) give the same records; bad files are errors that name the file and the fix."""
from __future__ import annotations

import gzip
import json

import pytest

from evidex.tools.qasper_data import QasperDataError, load_qasper, qasper_store_id, to_official
from qasper_tiny import CAPTION, DATA, P1, P2, huggingface_rows, official, write_official


def test_official_layout(tmp_path):
    papers = load_qasper(write_official(tmp_path))
    assert [p.paper_id for p in papers] == [P1, P2]
    p1 = papers[0]
    assert p1.title.startswith("Counting") and p1.sections[1].name == "Method ::: Data"
    assert p1.sections[1].paragraphs[0] == DATA and papers[1].sections[0].name is None
    assert [f.caption for f in p1.floats][0] == CAPTION and p1.floats[0].is_table and not p1.floats[1].is_table
    assert [q.question_id for q in p1.qas] == ["q-data", "q-resnet", "q-none", "q-f1"]
    assert p1.qas[0].answers[0].extractive_spans == ["PangoSet"] and p1.qas[2].answers[0].unanswerable
    assert p1.qas[1].answers[0].yes_no is True
    assert p1.store_id == qasper_store_id(P1) != qasper_store_id(P2)  # a stable uuid per paper


@pytest.mark.parametrize("container", ["jsonl", "json_list", "jsonl_gz", "parquet", "per_paper_jsonl"])
def test_hugging_face_layouts_read_the_same(tmp_path, container):
    rows = huggingface_rows()
    if container == "jsonl":
        path = tmp_path / "validation.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    elif container == "json_list":
        path = tmp_path / "validation.json"
        path.write_text(json.dumps(rows))
    elif container == "jsonl_gz":
        path = tmp_path / "validation.jsonl.gz"
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            fh.write("".join(json.dumps(r) + "\n" for r in rows))
    elif container == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = tmp_path / "validation-00000-of-00001.parquet"
        pq.write_table(pa.Table.from_pylist(rows), path)
    else:  # CiteBite-style: one {paper_id: paper} object per line
        path = tmp_path / "dev.jsonl"
        path.write_text("".join(json.dumps({pid: p}) + "\n" for pid, p in official().items()))
    papers = load_qasper(path)
    reference = load_qasper(write_official(tmp_path))
    assert [p.model_dump() for p in papers] == [p.model_dump() for p in reference]
    assert to_official(papers)[P1]["qas"][0]["answers"][0]["answer"]["extractive_spans"] == ["PangoSet"]


def test_the_dev_file_round_trips_through_the_hugging_face_layout(tmp_path, kit):
    path = kit.data_file("qasper/qasper-dev-v0.3.reconstructed.json")
    if path is None:
        pytest.skip("QASPER dev file not under EVIDEX_DATA_DIR")
    papers = load_qasper(path)
    assert len(papers) == 281 and sum(len(p.qas) for p in papers) == 1005
    assert sum(len(q.answers) for p in papers for q in p.qas) == 1764
    back = tmp_path / "official.json"
    back.write_text(json.dumps(to_official(papers)))
    assert [p.model_dump() for p in load_qasper(back)] == [p.model_dump() for p in papers]


def test_errors_name_the_file_and_the_problem(tmp_path):
    with pytest.raises(QasperDataError, match="no such QASPER file"):
        load_qasper(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"1901.0001": {"title": "x",')
    with pytest.raises(QasperDataError, match=r"bad.json: malformed JSON at line 1"):
        load_qasper(bad)
    bad.write_text("")
    with pytest.raises(QasperDataError, match="empty"):
        load_qasper(bad)
    bad.write_text(json.dumps({"1901.0001": {"title": "x", "qas": [{"question": "q?"}]}}))
    with pytest.raises(QasperDataError, match=r"1901.0001.*not a QASPER paper.*question_id"):
        load_qasper(bad)
    bad.write_text(json.dumps([{"title": "no id", "qas": []}]))
    with pytest.raises(QasperDataError, match="no paper id"):
        load_qasper(bad)
    bad.write_text(json.dumps({"a": official()[P1], "b": official()[P1]}))
    with pytest.raises(QasperDataError, match="question id q-data occurs more than once"):
        load_qasper(bad)
    lines = tmp_path / "rows.jsonl"
    lines.write_text(json.dumps(huggingface_rows()[0]) + "\n{not json\n")
    with pytest.raises(QasperDataError, match=r"rows.jsonl line 2: malformed JSON"):
        load_qasper(lines)
