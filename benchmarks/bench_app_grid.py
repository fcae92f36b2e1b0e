"""How long the workbench's trade-off view of 8 runs takes on Adult beyond the
runs themselves.

UCI Adult (45,222 records), its eight QIs with ARX's hierarchies, distinct
2-diversity of ``salary-class``; the grid k in {5, 10} x methods {kaca+,
mondrian} x with / without the model, each run with its lower bound, as the
page's "Explore alternatives" starts it. The app runs in this process
(FastAPI's TestClient, the same routes the browser uses); the script polls
the grid's status as the page does (every 0.5 s) and times from the request
to the trade-off page holding all 8 points. The baseline is the runs' own
time in the same process (the sum of each result's step timings): the
difference is what the app adds (threads, configuration files, polling,
the page). Writes ``benchmarks/results/app_grid.json`` and ``.csv`` and
``.png`` (with the machine).

    python benchmarks/bench_app_grid.py [--adult-dir DIR]
"""

from __future__ import annotations

import csv
import json
import re
import tempfile
import time
from pathlib import Path

import harness  # noqa: F401  (puts experiments/ on the import path)

from hieranon.io.datasets import load_adult
from hieranon_experiments.benchmarking import adult_dir, benchmark_parser, machine_info

HERE = Path(__file__).resolve().parent
QIS = ["age", "education", "marital-status", "occupation", "race", "sex", "native-country", "workclass"]
POLL_SECONDS = 0.5


def _workspace(folder: Path, adult: Path) -> tuple[Path, Path]:
    data = load_adult(adult, download=False)
    table = folder / "adult.csv"
    data.frame.to_csv(table, index=False)
    lines = ["quasi_identifiers:"]
    for q in QIS:
        (folder / f"{q}.csv").write_text(data.hierarchies[q].to_arx_csv(), encoding="utf-8")
        lines.append(f"  {q}: {{file: {q}.csv}}")
    others = [c for c in data.frame.columns if c not in QIS and c != "salary-class"]
    lines += ["k: 10", "privacy:", "  salary-class: [{l_diversity: 2}]", f"insensitive: {json.dumps(others)}"]
    config = folder / "adult.yaml"
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return table, config


def main(argv=None) -> None:
    from fastapi.testclient import TestClient

    from hieranon.app.server import create_app

    args = benchmark_parser(__doc__, HERE / "results").parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        table, config = _workspace(Path(tmp), adult_dir(args.adult_dir))
        app = create_app(table, config, token="bench")
        with TestClient(app, base_url="http://127.0.0.1") as client:
            client.get("/?token=bench")
            start = time.perf_counter()
            started = client.post("/explore", data={"ks": "5,10", "method1": "kaca+", "method2": "mondrian",
                                                    "without_model": "on"},
                                  headers={"Accept": "application/json"}).json()
            polls = 0
            while True:
                status = client.get(started["status"]).json()
                polls += 1
                if status["state"] != "running":
                    break
                time.sleep(POLL_SECONDS)
            page = client.get(f"/explore/{started['id']}").text
            wall = time.perf_counter() - start
            points = re.findall(r'<a href="/runs/(r\d+)"[^>]*><circle', page)
            runs = [r for r in app.state.hieranon.runs.values() if r.result is not None]
    runs_seconds = sum(sum(r.result.timings.values()) for r in runs)
    row = {"points": len(points), "state": status["state"], "wall_seconds": wall, "runs_seconds": runs_seconds,
           "overhead_seconds": wall - runs_seconds, "polls": polls}
    print(f"{row['points']} points ({row['state']}): {wall:.1f} s from the request to the page, runs "
          f"{runs_seconds:.1f} s, the app adds {row['overhead_seconds']:.2f} s", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "app_grid.json").write_text(json.dumps({"machine": machine_info(), "row": row}, indent=1))
    with open(args.out / "app_grid.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(row))
        w.writeheader()
        w.writerow(row)
    _plot(row, args.out / "app_grid.png")


def _plot(row: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 2.6))
    ax.barh([0], [row["runs_seconds"]], label="the 8 runs (with their lower bounds)")
    ax.barh([0], [row["overhead_seconds"]], left=[row["runs_seconds"]], label="what the app adds")
    ax.set_yticks([])
    ax.set_xlabel("seconds from the request to the trade-off page")
    ax.set_title(f"Workbench trade-off view on Adult: {row['wall_seconds']:.1f} s, the app adds "
                 f"{row['overhead_seconds']:.2f} s", fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
