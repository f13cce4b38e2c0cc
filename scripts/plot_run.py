#!/usr/bin/env python3
"""Training curves of one or more runs in one PNG, runs overlaid by colour:

    scripts/plot_run.py RUN_DIR [RUN_DIR ...] -o FILE.png [--series FILE.json]

Panels against steps: training (solid) and validation (dashed) loss, learning
rate, tokens/s, and BLEU (or accuracy, for classification runs) of each
split `evaluate --watch` scored (eval/watch-<split>.tsv); then loss and BLEU
against training wall time. --series writes what each panel plots as JSON.
Run with the tools' venv: py=$(scripts/setup_python.sh); "$py" scripts/plot_run.py ...

Exit status: 0 done, 1 unreadable run files (the message names the file), 2 bad usage.
"""
import argparse
import json
import math
import sys

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

from run_files import RunError, read_run  # noqa: E402


def line(label, xs, ys, style="-"):
    """A curve without the points where the value does not apply."""
    points = [(x, y) for x, y in zip(xs, ys) if y is not None and not math.isnan(x)]
    return {"label": label, "style": style, "x": [p[0] for p in points], "y": [p[1] for p in points]}


def score_lines(run, x):
    """BLEU per watched split, or accuracy in percent for classification runs."""
    out = []
    for split, series in run["eval"].items():
        if any(v is not None for v in series["bleu"]):
            out.append(line(f"{split} BLEU", series[x], series["bleu"]))
        elif any(v is not None for v in series["accuracy"]):
            out.append(line(f"{split} accuracy %", series[x], [100 * v if v is not None else None
                                                                for v in series["accuracy"]]))
    return out


def loss_lines(run, x):
    lines = [line("train", run["train"][x], run["train"]["loss"])]
    if run["valid"]:
        lines.append(line("valid", run["valid"][x], run["valid"]["loss"], "--"))
    return lines


def panels(run):
    """(title, x label, y label, lines) of one run, in figure order."""
    train = run["train"]
    return [
        ("loss", "step", "loss (label-smoothed)", loss_lines(run, "step")),
        ("learning rate", "step", "lr", [line("lr", train["step"], train["lr"])]),
        ("throughput", "step", "tokens/s", [line("tokens/s", train["step"], train["tokens_per_s"])]),
        ("evaluation", "step", "BLEU / accuracy %", score_lines(run, "step")),
        ("loss over time", "training wall time (s)", "loss", loss_lines(run, "wall_s")),
        ("evaluation over time", "training wall time (s)", "BLEU / accuracy %", score_lines(run, "wall_s")),
    ]


def draw(runs, out_file):
    """The figure: one axes per panel, each run in its own colour."""
    layout = [p[:3] for p in runs[0]["panels"]]
    fig, axes = plt.subplots(2, 3, figsize=(16, 8.5), dpi=100)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, (title, xlabel, ylabel) in zip(axes.flat, layout):
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    for i, run in enumerate(runs):
        for ax, (_, _, _, lines) in zip(axes.flat, run["panels"]):
            for curve in lines:
                marker = "o" if len(curve["x"]) < 30 and curve["label"] != "train" else None
                ax.plot(curve["x"], curve["y"], curve["style"], color=colours[i % len(colours)],
                        marker=marker, markersize=3, label=f"{run['name']} {curve['label']}")
    for ax in axes.flat:
        if ax.lines:
            ax.legend(fontsize=7)
        else:
            ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes, color="grey")
    fig.suptitle(", ".join(run["name"] for run in runs))
    fig.tight_layout()
    fig.savefig(out_file)
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR")
    parser.add_argument("-o", "--output", required=True, metavar="FILE.png")
    parser.add_argument("--series", metavar="FILE.json", help="also write the plotted curves as JSON")
    args = parser.parse_args()
    try:
        runs = [read_run(d) for d in args.runs]
    except (RunError, OSError) as e:
        print(f"plot_run: {e}", file=sys.stderr)
        return 1
    for run in runs:
        run["panels"] = panels(run)
    draw(runs, args.output)
    if args.series:
        with open(args.series, "w", encoding="utf-8") as f:
            json.dump([{"run": run["name"], "panels": [
                {"title": title, "x": xlabel, "y": ylabel, "lines": lines}
                for title, xlabel, ylabel, lines in run["panels"]]} for run in runs], f, indent=1)
    print(f"plot_run: {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
