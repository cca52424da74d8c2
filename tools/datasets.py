"""Find dataset files: ``EVIDEX_DATA_DIR`` first, then the working directory (a path given as a user would type it,
``--set dataset.file=my_questions.jsonl``), then the download cache, then the public source.

Datasets are never committed. When a file is missing and the network is allowed, it is downloaded from its
public GitHub source (pinned commit, see ``SOURCES``) into ``<cache>/data`` with a progress bar.
"""
from __future__ import annotations

import logging
import urllib.error
import urllib.request
from pathlib import Path

from tqdm import tqdm

from evidex.tools.settings import Settings, get_settings

log = logging.getLogger(__name__)

_IBE = "https://raw.githubusercontent.com/rk-izak/DATA72000-IBE/88c9d637cddcaf9eaf6a9f9e9caf8d4e6ef41004/data"
_CIVIC_TASKS = ("baseline", "missing_evidence", "wrong_evidence", "mixed", "selection_test",
                "assignment_test", "wrong_claim")

# relative path under EVIDEX_DATA_DIR -> public raw URL (pinned commit)
SOURCES: dict[str, str] = {
    **{f"ibe/CIVIC/{t}.json": f"{_IBE}/CIVIC/clean/context/{t}.json" for t in _CIVIC_TASKS},
    "ibe/CIVIC/evidence_kb.json": f"{_IBE}/CIVIC/clean/evidence_kb.json",
    "ibe/R4C/full_data_noid.json": f"{_IBE}/R4C/clean/full_data_noid.json",
}


class DataNotFoundError(FileNotFoundError):
    """A dataset file is neither in EVIDEX_DATA_DIR nor in the cache, and could not be downloaded."""


def resolve_data_file(relpath: str, settings: Settings | None = None) -> Path:
    """Return a local path for a dataset file (under EVIDEX_DATA_DIR, else under the working directory, else in the
    download cache), downloading it from its public source if needed."""
    settings = settings or get_settings()
    candidates = []
    if settings.data_dir:
        candidates.append(Path(settings.data_dir) / relpath)
    candidates.append(Path.cwd() / relpath)
    cached = settings.downloads_dir / relpath
    candidates.append(cached)
    for path in candidates:
        if path.is_file():
            return path
    url = SOURCES.get(relpath)
    where = f"EVIDEX_DATA_DIR={settings.data_dir}" if settings.data_dir else "EVIDEX_DATA_DIR is not set"
    hint = (
        f"Set EVIDEX_DATA_DIR (in the environment or a .env file) to a folder that holds {relpath!r}, pass "
        f"--data-dir DIR to evidex run, or give the file's path from the working directory {str(Path.cwd())!r}"
    )
    if url is None:
        raise DataNotFoundError(f"Dataset file {relpath!r} not found ({where}) and it has no public source. {hint}.")
    if settings.offline:
        raise DataNotFoundError(f"Dataset file {relpath!r} not found ({where}) and downloads are off. {hint}.")
    log.warning("Downloading %s from %s into %s", relpath, url, cached)
    try:
        _download(url, cached)
    except (urllib.error.URLError, OSError) as exc:
        raise DataNotFoundError(
            f"Dataset file {relpath!r} not found ({where}) and downloading {url} failed: {exc}. {hint}."
        ) from exc
    return cached


def _download(url: str, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(dest.suffix + ".part")
    with urllib.request.urlopen(url, timeout=60) as resp:  # noqa: S310 - fixed https URLs from SOURCES
        total = int(resp.headers.get("Content-Length") or 0) or None
        with open(tmp, "wb") as out, tqdm(total=total, unit="B", unit_scale=True, desc=dest.name) as bar:
            while chunk := resp.read(1 << 16):
                out.write(chunk)
                bar.update(len(chunk))
    tmp.replace(dest)
