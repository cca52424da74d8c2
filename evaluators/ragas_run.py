"""Score a finished run's explanations with RAGAS after the fact (the judge can be slow on a local model).

    python -m evidex.evaluators.ragas_run runs/<run_id> [--llm local|openai:gpt-4o-mini] [--limit N]

For every item, each grounded answer the run recorded (``grounded`` in results.jsonl; for claim tasks: the claim,
its explanation and the kept evidence texts) becomes a RAGAS sample: user_input = the question, response = the
answer, contexts = the texts it rests on.
Writes ``ragas.jsonl`` (per item) and adds ``ragas_*`` summaries (mean, 95% CI, n, NaN count) to
``metrics.json``. NaN (the judge's output could not be parsed, or a timeout) is kept and counted.
Each item is appended to ``ragas.jsonl`` as soon as it is scored: an interrupted run resumes where it stopped
(``--restart`` scores everything again).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path

from evidex.tools.cli_help import plain_help

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")


def score_run(run_dir: Path, llm, limit: int | None = None, timeout: int = 600, restart: bool = False) -> dict:
    from evidex.evaluators.ragas_metrics import RagasSample, count_nan, ragas_scores
    from evidex.evaluators.stats import summarize
    from evidex.tools.runfolder import ResultWriter, read_results

    rows = [r for r in read_results(run_dir / "results.jsonl") if r.get("prediction")][: limit or None]
    out_path = run_dir / "ragas.jsonl"
    if restart:
        out_path.unlink(missing_ok=True)
    done = {row["id"]: row for row in read_results(out_path)}
    wanted = {r["id"] for r in rows}
    out_rows = [row for i, row in done.items() if i in wanted]
    writer = ResultWriter(out_path)  # one fsynced line per item: a kill loses at most the item being scored
    for r in rows:
        if r["id"] in done:
            continue
        samples = [RagasSample(user_input=g["question"], response=g["answer"], retrieved_contexts=g["contexts"])
                   for g in r.get("grounded") or [] if g.get("answer")]
        scores = ragas_scores(samples, llm, timeout=timeout) if samples else []
        merged = {m: sum(s[m] for s in scores) / len(scores) for m in (scores[0] if scores else {})}
        row = {"id": r["id"], **merged}
        writer.append(row)
        out_rows.append(row)
        print(r["id"], {k: round(v, 3) for k, v in merged.items()}, flush=True)
    metrics_path = run_dir / "metrics.json"
    summary = json.loads(metrics_path.read_text()) if metrics_path.is_file() else {"metrics": {}}
    names = sorted({k for row in out_rows for k in row if k != "id"})
    nan_counts = count_nan([{k: v for k, v in row.items() if k != "id"} for row in out_rows])
    for name in names:
        values = [row.get(name, math.nan) for row in out_rows]
        summary["metrics"][f"ragas_{name}"] = summarize(values).model_dump() | {"n_nan": nan_counts.get(name, 0)}
    metrics_path.write_text(json.dumps(summary, indent=2, default=str))
    if "n_items" in summary:  # a run's own metrics.json: its report shows the RAGAS rows too
        from evidex.evaluators.report import write_markdown_report

        write_markdown_report(run_dir / "report.md", summary, read_results(run_dir / "results.jsonl"))
    return {n: summary["metrics"][f"ragas_{n}"] for n in names}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m evidex.evaluators.ragas_run", description=plain_help(__doc__),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run_dir", type=Path)
    p.add_argument("--llm", default="local", help="judge model spec (default: local)")
    p.add_argument("--limit", type=int)
    p.add_argument("--timeout", type=int, default=600, help="seconds per judge call")
    p.add_argument("--restart", action="store_true", help="discard ragas.jsonl and score every item again")
    args = p.parse_args(argv)
    if args.limit is not None and args.limit < 1:
        p.error(f"--limit must be at least 1 (got {args.limit})")
    if not (args.run_dir / "results.jsonl").is_file():
        p.error(f"{args.run_dir} is not a run folder (no results.jsonl); pass a folder made by evidex run")
    from evidex.tools.runfolder import read_results

    if not any(g.get("answer") for r in read_results(args.run_dir / "results.jsonl") if r.get("prediction")
               for g in r.get("grounded") or []):
        p.error(f"{args.run_dir} has no answers to score (was steps.write off, or was the run made before "
                "results recorded them? run it again)")
    from evidex.agents.models import make_chat_model

    try:
        llm = make_chat_model(args.llm, temperature=0.0, max_tokens=1024)
    except (ValueError, FileNotFoundError, RuntimeError) as exc:
        print(f"error: --llm {args.llm}: {exc}", file=sys.stderr)
        return 2
    for name, s in score_run(args.run_dir, llm, args.limit, args.timeout, args.restart).items():
        print(f"ragas_{name}: mean {s['mean']:.3f} [{s['ci_low']:.3f}, {s['ci_high']:.3f}] n={s['n']} NaN={s['n_nan']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
