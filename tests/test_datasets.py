"""Dataset file resolution: EVIDEX_DATA_DIR, the download cache, a real HTTP download, and clear errors."""
from __future__ import annotations

import http.server
import threading
from functools import partial

import pytest

import evidex.tools.datasets as datasets
from evidex.tools.datasets import DataNotFoundError, resolve_data_file
from evidex.tools.settings import Settings


def test_data_dir_wins(tmp_path):
    f = tmp_path / "ibe" / "CIVIC" / "mixed.json"
    f.parent.mkdir(parents=True)
    f.write_text("[]")
    assert resolve_data_file("ibe/CIVIC/mixed.json", Settings(data_dir=tmp_path, cache_dir=tmp_path / "c")) == f


def test_a_path_from_the_working_directory_is_found_after_the_data_dir(tmp_path, monkeypatch):
    """``--set dataset.file=questions/mine.jsonl`` typed in the folder that holds it; the data dir still wins."""
    data, work = tmp_path / "data", tmp_path / "work"
    mine = work / "questions" / "mine.jsonl"
    mine.parent.mkdir(parents=True)
    mine.write_text("{}")
    monkeypatch.chdir(work)
    s = Settings(data_dir=data, cache_dir=tmp_path / "c", offline=True)
    assert resolve_data_file("questions/mine.jsonl", s) == work / "questions" / "mine.jsonl"
    (data / "questions").mkdir(parents=True)
    (data / "questions" / "mine.jsonl").write_text("{}")
    assert resolve_data_file("questions/mine.jsonl", s) == data / "questions" / "mine.jsonl"
    with pytest.raises(DataNotFoundError, match="path from the working directory"):
        resolve_data_file("questions/other.jsonl", s)


def test_offline_error_says_how_to_point_data_dir(tmp_path):
    s = Settings(data_dir=tmp_path, cache_dir=tmp_path / "c", offline=True)
    with pytest.raises(DataNotFoundError, match="EVIDEX_DATA_DIR"):
        resolve_data_file("ibe/CIVIC/mixed.json", s)


def test_unknown_file_has_no_source(tmp_path):
    with pytest.raises(DataNotFoundError, match="no public source"):
        resolve_data_file("nope/file.json", Settings(cache_dir=tmp_path))


def test_downloads_into_cache_over_http(tmp_path, monkeypatch):
    served = tmp_path / "srv"
    served.mkdir()
    (served / "mixed.json").write_text('[{"claim": "x"}]')
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/mixed.json"
        monkeypatch.setitem(datasets.SOURCES, "ibe/CIVIC/mixed.json", url)
        s = Settings(cache_dir=tmp_path / "cache", data_dir=None)
        path = resolve_data_file("ibe/CIVIC/mixed.json", s)
        assert path == s.downloads_dir / "ibe/CIVIC/mixed.json"
        assert path.read_text() == '[{"claim": "x"}]'
        # second call: served from the cache even when the server is gone
        server.shutdown()
        assert resolve_data_file("ibe/CIVIC/mixed.json", s) == path
    finally:
        server.server_close()


def test_failed_download_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setitem(datasets.SOURCES, "ibe/CIVIC/mixed.json", "http://127.0.0.1:9/none.json")
    with pytest.raises(DataNotFoundError, match="downloading .* failed"):
        resolve_data_file("ibe/CIVIC/mixed.json", Settings(cache_dir=tmp_path, data_dir=None))
