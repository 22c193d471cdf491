"""docs/benchmarks.md from one benchmark run's results (see benchmarks/run.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

GOALS = {
    "model_ratio_c16": 1.25,
    "vs_promptfoo": 1.8,  # issue 33: `dagster asset materialize` at least 1.8x as fast as promptfoo
    "vs_inspect": 4.0,
    "cli_vs_promptfoo": 2.5,  # issue 33: `eval-pipelines run` at least 2.5x as fast as promptfoo
    "cli_over_ideal_s": 1.5,  # issue 33: `eval-pipelines run` at most ideal + 1.5 s
    "import_s": 1.0,  # issue 33: `python -c "import eval_pipelines.definitions"`
    "cached_requests": 0,
    "grading_per_s": 200_000,
    "scale_rss_mb": 1024,  # issue 33: 100,000 cases end to end at most 1 GB peak
}


def mark(ok: bool) -> str:
    return "met" if ok else "**missed**"


def _steps_table(steps: list[dict[str, float]]) -> list[str]:
    import statistics

    runs = [s for s in steps if s]
    if not runs:
        return ["(step timings unavailable)"]
    keys = sorted({k for s in runs for k in s}, key=lambda k: -statistics.median(s.get(k, 0) for s in runs))
    lines = ["| step | median s |", "|---|---|"]
    lines += [f"| `{k}` | {statistics.median(s.get(k, 0.0) for s in runs):.2f} |" for k in keys]
    total = statistics.median(sum(s.values()) for s in runs)
    lines.append(f"| all steps | {total:.2f} |")
    return lines


def _before_after(r: dict[str, Any], before: dict[str, Any]) -> list[str]:
    """The figures an earlier commit's ``--only`` run measured, beside this run's."""
    rows = []

    def row(label: str, old: Any, new: Any, unit: str, digits: int = 2) -> None:
        if old is None or new is None:
            return
        rows.append(f"| {label} | {old.median:.{digits}f}{unit} | {new.median:.{digits}f}{unit} | "
                    f"{old.median / new.median:.2f}× |")

    for old, new in zip(before.get("model_stage", []), r.get("model_stage", [])):
        row(f"model stage wall / ideal, C={new['concurrency']}", old["ratio"], new["ratio"], "", 3)
        row(f"model stage CPU ms per call, C={new['concurrency']}", old["cpu_ms_per_call"],
            new["cpu_ms_per_call"], "")
    if before.get("cpu") and r.get("cpu"):
        row("CPU ms per call, our model stage at zero latency (figure 7)", before["cpu"]["ours"], r["cpu"]["ours"], "", 3)
    if before.get("e2e") and r.get("e2e"):
        row("`dagster asset materialize`, 1,000 cases (figure 2)", before["e2e"]["wall"], r["e2e"]["wall"], " s")
    if before.get("import_floor") and r.get("import_floor"):
        row("fresh process importing Dagster + our definitions", before["import_floor"], r["import_floor"], " s")
    if before.get("cli") and r.get("cli"):
        row("`eval-pipelines run`, 1,000 cases (figure 3)", before["cli"]["wall"], r["cli"]["wall"], " s")
    for key in ("promptfoo", "inspect"):
        if before.get(key) and r.get(key):  # the competitors measured in the same run as each side
            row(f"{key} / `dagster asset materialize` (figure 3; higher is better for us)",
                _ratio(before[key]["wall"], before["e2e"]["wall"]) if before.get("e2e") else None,
                _ratio(r[key]["wall"], r["e2e"]["wall"]), "×")
    if before.get("cached") and r.get("cached"):
        row("cached re-run through Dagster (figure 4)", before["cached"]["wall"], r["cached"]["wall"], " s")
    if before.get("grading") and r.get("grading"):
        row("grading, assertions/s (figure 5; lower ratio is better)", before["grading"]["compute"],
            r["grading"]["compute"], "", 0)
    if not rows:
        return []
    return ["## Before and after", "",
            f"The same figures for {before.get('label', 'an earlier commit')}, "
            f"measured on this machine with `--only {_only(before.get('argv', []))}` "
            f"({before['started']:%Y-%m-%d %H:%M} UTC, "
            f"{len(before['e2e']['wall'].values) if before.get('e2e') else '?'} runs each):", "",
            "| figure | before | after | before ÷ after |", "|---|---|---|---|", *rows, ""]


def _only(argv: list[str]) -> str:
    """The figures an ``--only`` run measured (its folders are this machine's, not quoted)."""
    return next((b for a, b in zip(argv, argv[1:]) if a == "--only"), "?")


def _cli_goal(r: dict[str, Any], n: int, sizes: dict[str, Any]) -> str:
    """Issue 33: at most the ideal N·latency/C plus 1.5 s."""
    ideal = n * sizes["latency_ms"] / 1000 / 16
    limit = ideal + GOALS["cli_over_ideal_s"]
    text = f"≤ ideal {ideal:.2f} s + {GOALS['cli_over_ideal_s']:g} s = {limit:.2f} s: " \
           f"{mark(r['cli']['wall'].median <= limit)}"
    stage = next((m for m in r.get("model_stage", []) if m["concurrency"] == 16), None)
    libraries = (r.get("floors") or {}).get("cli_libraries")
    if stage and libraries:  # no run of the CLI can beat its own model stage plus loading its libraries
        text += (f" (the model stage in process, figure 1, plus importing openai, pandas and DuckDB: "
                 f"{stage['wall'].median:.2f} + {libraries.median:.2f} = {stage['wall'].median + libraries.median:.2f} s)")
    return text


def _floor_lines(r: dict[str, Any]) -> list[str]:
    """The import floors measured in the same rounds (benchmarks/side_by_side.py, ``FLOORS``)."""
    floors = r.get("floors") or {}
    lines = []
    if floors.get("dagster_import"):
        ours = r["import_floor"].median - floors["dagster_import"].median
        lines.append(f"- its floor, Dagster's own import with the collector paused as ours is "
                     f"(`python -c \"import gc; gc.disable(); import dagster; gc.freeze()\"`) in the same rounds: {floors['dagster_import'].text()}; "
                     f"our definitions add {ours * 1000:+.0f} ms to it (medians)")
    if floors.get("cli_libraries"):
        lines.append(f"- `python -c \"import gc; gc.disable(); import openai, pandas, duckdb; gc.freeze()\"` (the libraries "
                     f"`eval-pipelines run` loads before its first model call, the collector paused as it does) "
                     f"in the same rounds: {floors['cli_libraries'].text()}")
    return lines


class _Median:
    def __init__(self, value: float) -> None:
        self.median = value


def _ratio(numerator: Any, denominator: Any) -> _Median:
    return _Median(numerator.median / denominator.median)


def write_markdown(r: dict[str, Any], out: Path, *, quick: bool, argv: list[str],
                   before: dict[str, Any] | None = None) -> None:
    sizes = r["sizes"]
    n = sizes["cases"]
    lines: list[str] = ["# Benchmarks", ""]
    if quick:
        lines += ["**Quick smoke run (small N): these numbers say nothing about speed.**", ""]
    command = "python -m benchmarks.run" + (" " + " ".join(argv) if argv else "")
    lines += [
        f"Measured in one run of `{command}`, {r['started']:%Y-%m-%d %H:%M} to {r['finished']:%H:%M} UTC. "
        f"Medians over the runs stated, with min and max.", "",
        "Two benchmarks have their own pages, each from one run of its script: the nightly batch through the daemon ([benchmarks-nightly.md](benchmarks-nightly.md), `python -m benchmarks.nightly`) and the agent target's overhead per turn and tool call ([benchmarks-agent.md](benchmarks-agent.md), `python -m benchmarks.agent`).", "",
        "## Machine", "", "| | |", "|---|---|",
        *[f"| {k} | {v} |" for k, v in r["machine"].items()], "",
    ]

    ceiling = r["ceiling_rps"]
    lines += ["## 0. The benchmark server's ceiling", "",
              f"`benchmarks/server.py` (aiohttp on uvloop, its own process) served "
              f"**{ceiling.median:,.0f} requests/s** at zero latency and concurrency 64 "
              f"({ceiling.text('req/s', 0)}), driven by a bare aiohttp client in a third process. "
              f"The model-stage figures below need at most {n / (n * sizes['latency_ms'] / 1000 / 64):,.0f} "
              "requests/s (1,000 calls at concurrency 64 and the stated latency), so the server is not the limit "
              "there; at zero latency (figures 6 and 7) client and server share the 2 cores.", ""]

    lines += ["## 1. Model stage", "",
              f"{n} cases, server latency {sizes['latency_ms']:g} ms, `engine.run_model_phase` in process "
              "(no cache), wall time divided by the ideal N·latency/C.", "",
              "| concurrency C | ideal | wall | wall / ideal | CPU ms per call | goal |", "|---|---|---|---|---|---|"]
    for m in r["model_stage"]:
        goal = f"≤ {GOALS['model_ratio_c16']} ({mark(m['ratio'].median <= GOALS['model_ratio_c16'])})" \
            if m["concurrency"] == 16 else "none set"
        lines.append(f"| {m['concurrency']} | {m['ideal_s']:.3f} s | {m['wall'].text()} | "
                     f"{m['ratio'].text('', 3)} | {m['cpu_ms_per_call'].median:.2f} | {goal} |")
    lines.append("")

    e2e = r["e2e"]
    lines += ["## 2. End to end: `dagster asset materialize`", "",
              f"One skill-version partition of the same {n} cases (one `equals` assertion each), all nine assets "
              "and the four checks, `use_cache: false`, target concurrency 16, a fresh process each time:", "",
              "```bash", "dagster asset materialize -m eval_pipelines.definitions --select '*' \\",
              f"  --partition '{'<date>'}|bench-{n}@1.0.0' \\",
              "  --config-json '{\"ops\": {\"evaluate_partition\": {\"config\": {\"use_cache\": false}}}}'", "```", "",
              f"- wall: **{e2e['wall'].text()}** (against promptfoo: figure 3)",
              f"- peak RSS {e2e['rss_mb'].median:.0f} MB; requests per run {e2e['requests']}",
              f"- `python -c \"import eval_pipelines.definitions\"` (a fresh process that only imports Dagster and "
              f"our definitions): **{r['import_floor'].text()}**; goal ≤ {GOALS['import_s']:g} s: "
              f"{mark(r['import_floor'].median <= GOALS['import_s'])}",
              *_floor_lines(r),
              *([f"- load average (1 min) before each round of figures 2 and 3: {r['side_by_side_load']}"]
                if r.get("side_by_side_load") else []), "",
              "Where the time goes (per-step wall time from the run's Dagster event log; the rest of the wall "
              "time is interpreter start, imports, loading the definitions and the instance, and run bookkeeping):", "",
              *_steps_table(e2e["steps"]), ""]

    lines += ["## 3. Side by side: promptfoo and inspect_ai", "",
              f"The same {n} prompts and exact-match checks against the same server (latency "
              f"{sizes['latency_ms']:g} ms), concurrency 16, each a fresh process, in this run; the tools take turns "
              "(one run of each per round), so a change in the shared machine's load hits them alike:", "",
              "| tool | version | wall | ours ÷ theirs | we are, end to end | goal |", "|---|---|---|---|---|---|",
              f"| eval-pipelines (`dagster asset materialize`, figure 2) | | {e2e['wall'].text()} | 1 | | |",
              f"| eval-pipelines CLI (`eval-pipelines run`, same engine and tables, no Dagster) | | "
              f"{r['cli']['wall'].text()} | | | {_cli_goal(r, n, sizes)} |"]
    for name, key, goal in (("promptfoo", "promptfoo", GOALS["vs_promptfoo"]),
                            ("inspect_ai", "inspect", GOALS["vs_inspect"])):
        other = r.get(key)
        if other is None:
            lines.append(f"| {name} | not installed | | | | {goal:g}× faster: not measured |")
            continue
        ratio = e2e["wall"].median / other["wall"].median
        cli_ratio = other["wall"].median / r["cli"]["wall"].median
        cli_goal = (f"; the CLI {GOALS['cli_vs_promptfoo']:g}× as fast: "
                    f"{mark(cli_ratio >= GOALS['cli_vs_promptfoo'])}") if key == "promptfoo" else ""
        lines.append(f"| {name} | {other['version']} | {other['wall'].text()} | {ratio:.2f} | "
                     f"{1 / ratio:.2f}× as fast (the CLI: {cli_ratio:.2f}×) | "
                     f"`dagster asset materialize` {goal:g}× as fast: {mark(1 / ratio >= goal)}{cli_goal} |")
    for key in ("promptfoo", "inspect"):
        if r.get(key):
            lines.append(f"\n`{key}` command: `{r[key]['command']}`")
    lines.append("")

    cached = r["cached"]
    lines += ["## 4. Cached re-run", "",
              f"The same materialization with the response cache on, after one run filled it: requests made "
              f"{cached['requests']} (goal 0: {mark(all(x == 0 for x in cached['requests']))}), "
              f"wall {cached['wall'].text()}.", ""]

    g = r["grading"]
    lines += ["## 5. Grading throughput", "",
              f"{g['outputs']:,} stored outputs ({g['cases']:,} cases × {g['trials']} trials, one `equals` each, "
              "half of them right), graded by `pipeline.grade_rows`, the function the `grades` asset calls:", "",
              f"- grading only: **{g['compute'].median:,.0f} assertions/s** ({g['compute'].text('/s', 0)}); "
              f"goal ≥ {GOALS['grading_per_s']:,}/s: {mark(g['compute'].median >= GOALS['grading_per_s'])}",
              f"- reading the outputs from DuckDB, grading and writing the grades partition: "
              f"{g['with_db'].median:,.0f} assertions/s ({g['with_db'].text('/s', 0)})",
              f"- the per-output path (every grade before batch grading; still used for other assertion types), "
              f"on {g['per_output_sample']:,} of the outputs: {g['per_output_path']:,.0f} assertions/s", ""]

    lines += ["## 6. Scale", "",
              "The whole pipeline (`dagster asset materialize`, fresh process) at zero server latency and "
              "target concurrency 64, so the time is our own work and the HTTP round trips:", "",
              "| cases | wall | ms per case | peak RSS | goal RSS ≤ 1 GB |", "|---|---|---|---|---|"]
    for s in r["scale"]:
        lines.append(f"| {s['cases']:,} | {s['wall'].text()} | {s['wall'].median * 1000 / s['cases']:.2f} | "
                     f"{s['rss_mb'].median:.0f} MB | {mark(s['rss_mb'].median <= GOALS['scale_rss_mb'])} |")
    first, last = r["scale"][0], r["scale"][-1]
    growth = (last["wall"].median / first["wall"].median) / (last["cases"] / first["cases"])
    steps_text = "; ".join(
        f"{b['cases'] // a['cases']}× the cases ({a['cases']:,} → {b['cases']:,}) took "
        f"{b['wall'].median / a['wall'].median:.1f}× the time"
        for a, b in zip(r["scale"], r["scale"][1:]))
    lines += ["", f"{steps_text}. Time per case falls as the fixed start-up cost (figure 2) is spread "
              f"thinner, so growth is at most linear ({growth:.2f} of linear from the smallest to the largest).", ""]

    cpu = r["cpu"]
    ours, post, create = cpu["ours"].median, cpu["bare_post"].median, cpu["bare_create"].median
    lines += ["## 7. CPU per model call", "",
              "Process CPU time per call at zero latency, concurrency 16, the same calls:", "",
              "| path | CPU ms per call |", "|---|---|",
              f"| our model stage (`run_model_phase`: request building, retries, outputs) | {ours:.3f} |",
              f"| bare openai client, `client.post(\"/chat/completions\")` (the call we make) | {post:.3f} |",
              f"| bare openai client, `client.chat.completions.create(...)` (the usual call) | {create:.3f} |",
              "", f"Our code beyond the client: **{ours - post:+.3f} ms per call** (ours minus the bare `post`"
              + ("; below zero, our stage used less CPU than the bare loop, which starts every task at once, "
                 "so our own share is smaller than this measurement resolves). " if ours < post else "). ")
              + f"Against the usual `create()` loop our whole stage spends {abs(create - ours):.3f} ms per call "
              f"{'less' if create >= ours else 'more'}.", ""]
    if before:
        lines += _before_after(r, before)
    out.parent.mkdir(parents=True, exist_ok=True)
    existing = out.read_text() if out.exists() else ""
    marker = "<!-- hand-written notes below are kept when the figures are regenerated -->"
    notes = existing.split(marker, 1)[1] if marker in existing else "\n"
    out.write_text("\n".join(lines) + "\n" + marker + notes)


SERIES_KEYS = {("ceiling_rps",), ("import_floor",), ("floors", "dagster_import"), ("floors", "cli_libraries"),
               ("e2e", "wall"), ("e2e", "rss_mb"), ("cached", "wall"),
               ("cli", "wall"), ("promptfoo", "wall"), ("inspect", "wall"), ("grading", "compute"),
               ("grading", "with_db"), ("cpu", "ours"), ("cpu", "bare_post"), ("cpu", "bare_create")}


def load_results(path: Path) -> dict[str, Any]:
    """A run's JSON back into the shapes ``write_markdown`` reads (lists -> Series, ISO -> datetime)."""
    import json
    from datetime import datetime

    from benchmarks.series import Series

    r = json.loads(path.read_text())
    for key in ("started", "finished"):
        if key in r:
            r[key] = datetime.fromisoformat(r[key])
    for keys in SERIES_KEYS:
        holder = r
        for k in keys[:-1]:
            holder = holder.get(k) if isinstance(holder, dict) else None
        if isinstance(holder, dict) and isinstance(holder.get(keys[-1]), list):
            holder[keys[-1]] = Series(holder[keys[-1]])
    for m in r.get("model_stage", []):
        for k in ("wall", "ratio", "cpu_ms_per_call"):
            m[k] = Series(m[k])
    for s in r.get("scale", []):
        for k in ("wall", "rss_mb"):
            s[k] = Series(s[k])
    return r


def main(argv: list[str] | None = None) -> int:
    """Re-render docs/benchmarks.md from a run's JSON, optionally beside an earlier commit's."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("results", help="the JSON a full run wrote (docs/benchmarks.json)")
    parser.add_argument("--before", help="JSON of an --only run on an earlier commit")
    parser.add_argument("--before-label", default="before", help="how to name that commit")
    parser.add_argument("--out", default="docs/benchmarks.md")
    args = parser.parse_args(argv)
    results = load_results(Path(args.results))
    before = None
    if args.before:
        before = load_results(Path(args.before))
        before["label"] = args.before_label
    write_markdown(results, Path(args.out), quick=False, argv=results.get("argv", []), before=before)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
