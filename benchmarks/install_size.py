"""Install time, size and package count of `pip install evidex` (core) and `pip install 'evidex[all]'`, each from the
built wheel into a fresh Python venv, at the tested versions (constraints.txt).

    python -m benchmarks.install_size --venvs /tmp/evidex-install            # both
    python -m benchmarks.install_size --venvs DIR --only all

[all] installs torch first as `pip install torch==2.13.0` (the CPU build; .ci/setup does the same). The
evidex-minilm-onnx wheel comes from EVIDEX_WHEELS (default ~/.cache/evidex/wheels, built by .ci/setup). Packages
come from this machine's package index and wheel folder, so the times are for a warm local mirror, not for a
download over the internet. Results: benchmarks/results/install_size.json.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import venv
from pathlib import Path

from rich.console import Console
from rich.table import Table

from benchmarks import write_results
from evidex.tools.cli_help import plain_help

REPO = Path(__file__).resolve().parents[1]
DEFAULT_JSON = Path("benchmarks/results/install_size.json")


def build_wheel(dist: Path) -> Path:
    """The checkout's wheel, built into ``dist``. setuptools copies modules into ``build/lib`` and never removes
    one the checkout has since deleted, so that scratch folder (git-ignored, made by the last build) goes first:
    the wheel holds this checkout's files only."""
    shutil.rmtree(REPO / "build", ignore_errors=True)
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                           str(dist), str(REPO)], capture_output=True, text=True, timeout=600)
    if proc.returncode:
        raise RuntimeError(f"building the wheel failed (pip wheel {REPO}):\n{proc.stderr[-3000:]}")
    (wheel,) = dist.glob("evidex-*.whl")
    return wheel


def measure(name: str, folder: Path, wheel: Path, wheels: Path) -> dict:
    shutil.rmtree(folder, ignore_errors=True)
    start = time.monotonic()
    venv.EnvBuilder(with_pip=True).create(folder)
    pip = [str(folder / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    constraints = ["-c", str(REPO / "constraints.txt")]
    if name == "all":
        subprocess.run(pip + constraints + ["torch==2.13.0"], check=True)
    target = f"{wheel}[all]" if name == "all" else str(wheel)
    subprocess.run(pip + constraints + ["--find-links", str(wheels), target], check=True)
    seconds = time.monotonic() - start
    listed = json.loads(subprocess.check_output([str(folder / "bin" / "python"), "-m", "pip", "list", "--format",
                                                 "json", "--disable-pip-version-check"], text=True))
    size = sum(p.lstat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())
    return {"install": name, "packages": len(listed), "mb": round(size / 1e6), "seconds": round(seconds)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.install_size", description=plain_help(__doc__),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--venvs", type=Path, required=True, help="folder for the fresh venvs (deleted and made anew)")
    p.add_argument("--only", choices=["core", "all"], help="measure one install only")
    p.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = p.parse_args(argv)
    wheels = Path(os.environ.get("EVIDEX_WHEELS") or Path.home() / ".cache" / "evidex" / "wheels")
    dist = args.venvs / "dist"
    shutil.rmtree(dist, ignore_errors=True)
    wheel = build_wheel(dist)
    rows = [measure(n, args.venvs / n, wheel, wheels) for n in ("core", "all") if args.only in (None, n)]
    table = Table(title="evidex installed from the wheel into a fresh venv (tested versions, local package mirror)")
    for col in ("install", "packages", "size (MB)", "time (s)"):
        table.add_column(col)
    for r in rows:
        table.add_row(r["install"], str(r["packages"]), str(r["mb"]), str(r["seconds"]))
    Console().print(table)
    write_results(args.json, {"benchmark": "install_size", "python": sys.version.split()[0], "rows": rows,
                              "note": "packages include pip and setuptools; sizes are the venv folder"})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
