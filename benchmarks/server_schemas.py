"""How long the LangGraph server takes to show each assistant's settings (issue 50: <= 2 s, no model started).

    python -m benchmarks.server_schemas            # langgraph dev on a free loopback port, every assistant

Starts ``langgraph dev`` with the project's ``langgraph.json`` (no key: loopback), then for every assistant times
``get_schemas`` + ``get_graph`` twice (cold: the first fetch builds the graph to show; warm: cached) and counts the
settings its context schema lists. Prints a table and writes ``benchmarks/results/server_schemas.json``.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from benchmarks import write_results

REPO = Path(__file__).resolve().parents[1]
TARGET_S = 2.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(tmp: Path) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    env = {**os.environ, "LANGSMITH_TRACING": "false", "LANGGRAPH_CLI_NO_ANALYTICS": "1",
           "EVIDEX_RUNS_DIR": str(tmp / "runs")}
    for name in ("EVIDEX_STUDIO_SET", "EVIDEX_SERVER_ALLOW", "EVIDEX_SERVER_API_KEY"):
        env.pop(name, None)
    cli = "import sys; from langgraph_cli.cli import cli; sys.argv[0] = 'langgraph'; cli()"
    proc = subprocess.Popen([sys.executable, "-c", cli, "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1",
                             "--port", str(port), "--config", str(REPO / "langgraph.json")], cwd=REPO, env=env,
                            stdout=open(tmp / "server.log", "w"), stderr=subprocess.STDOUT,  # noqa: SIM115
                            start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"langgraph dev exited {proc.returncode}: {(tmp / 'server.log').read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/ok", timeout=2):  # noqa: S310 - loopback
                return proc, url
        except urllib.error.HTTPError:
            return proc, url
        except OSError:
            time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGKILL)
    raise SystemExit("langgraph dev did not answer within 180 s")


async def _measure(url: str) -> list[dict]:
    from langgraph_sdk import get_client

    client = get_client(url=url)
    rows = []
    for a in sorted(await client.assistants.search(limit=100), key=lambda a: a["graph_id"]):
        times = []
        for _ in range(2):
            start = time.monotonic()
            schemas = await client.assistants.get_schemas(a["assistant_id"])
            await client.assistants.get_graph(a["assistant_id"])
            times.append(round(time.monotonic() - start, 3))
        props = (schemas.get("context_schema") or {}).get("properties") or {}
        rows.append({"assistant": a["graph_id"], "cold_s": times[0], "warm_s": times[1],
                     "sections_shown": len(props)})
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.server_schemas", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", type=Path, default=Path("benchmarks/results/server_schemas.json"))
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        proc, url = _start(Path(tmp))
        try:
            rows = asyncio.run(_measure(url))
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)
    print(f"{'assistant':<22} {'cold s':>7} {'warm s':>7} {'sections':>8}")
    for r in rows:
        print(f"{r['assistant']:<22} {r['cold_s']:>7.2f} {r['warm_s']:>7.2f} {r['sections_shown']:>8}")
    worst = max(r["cold_s"] for r in rows)
    print(f"slowest first fetch {worst:.2f} s (target <= {TARGET_S:g} s): {'met' if worst <= TARGET_S else 'NOT met'}")
    write_results(args.json, {"target_s": TARGET_S, "met": worst <= TARGET_S, "cpu_count": os.cpu_count(),
                              "load_avg": list(os.getloadavg()), "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
