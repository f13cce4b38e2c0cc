"""A training run's curves, read from the files the trainer and evaluate write
(see README, "What a run writes"), for plot_run.py and to_tensorboard.py:

    metrics.jsonl           one JSON object per log interval: step, loss, nll, ppl, lr,
                            grad_norm, tokens_per_s, elapsed_s (since the trainer started), ...
    valid.jsonl             one per validation: step, loss, nll, ppl, best_loss
    eval/watch-<split>.tsv  one row per checkpoint scored by `evaluate --watch`: step, loss,
                            ppl, bleu, chrf, exact_match, accuracy, seconds, checkpoint
                            ("-" where a value does not apply)

Every series is a dict of equal-length lists keyed by column, "step" first.
Wall time ("wall_s") is the training time at that step: elapsed_s, carried
on across resumes (a resumed trainer counts from 0 again); validation and
evaluation rows get the training time of their step (linear in between).
"""
import csv
import json
import math
from pathlib import Path

TRAIN_KEYS = ("loss", "nll", "ppl", "lr", "grad_norm", "tokens_per_s")
VALID_KEYS = ("loss", "nll", "ppl")
EVAL_KEYS = ("loss", "ppl", "bleu", "chrf", "exact_match", "accuracy")


class RunError(Exception):
    """Bad or missing run files; the message names the file."""


def read_jsonl(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise RunError(f"{path}:{number}: not JSON ({e.msg})") from None
            if not isinstance(row, dict) or not isinstance(row.get("step"), int):
                raise RunError(f"{path}:{number}: a row needs an integer \"step\"")
            rows.append(row)
    return rows


def read_watch_table(path):
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    for number, row in enumerate(rows, 2):
        if not (row.get("step") or "").isdigit():
            raise RunError(f"{path}:{number}: \"step\" is not a step number: {row.get('step')!r}")
    return rows


def number(value, path, key):
    """A column's value as float; None where it does not apply ("-", missing)."""
    if value is None or value == "-":
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        raise RunError(f"{path}: {key} is not a number: {value!r}") from None


def column(rows, key, path):
    return [number(row.get(key), path, key) for row in rows]


def wall_seconds(train_rows):
    """elapsed_s of each row, carried on across resumes."""
    out, offset, previous = [], 0.0, 0.0
    for row in train_rows:
        elapsed = float(row.get("elapsed_s", math.nan))
        if elapsed < previous:  # a resumed trainer starts counting again
            offset += previous
        previous = elapsed
        out.append(offset + elapsed)
    return out


def interpolate(steps, known_steps, known_values):
    """known_values at `steps`, linear between known points, constant outside."""
    out = []
    for s in steps:
        if not known_steps:
            out.append(math.nan)
        elif s <= known_steps[0]:
            out.append(known_values[0])
        elif s >= known_steps[-1]:
            out.append(known_values[-1])
        else:
            i = next(i for i, k in enumerate(known_steps) if k >= s)
            s0, s1, v0, v1 = known_steps[i - 1], known_steps[i], known_values[i - 1], known_values[i]
            out.append(v0 + (v1 - v0) * (s - s0) / (s1 - s0))
    return out


def read_run(run_dir):
    """{"name", "train": series, "valid": series or None, "eval": {split: series}}."""
    run = Path(run_dir)
    metrics = run / "metrics.jsonl"
    if not metrics.is_file():
        raise RunError(f"{metrics}: no such file (is {run} a run directory?)")
    train_rows = read_jsonl(metrics)
    if not train_rows:
        raise RunError(f"{metrics}: no rows yet")
    train = {"step": [r["step"] for r in train_rows], "wall_s": wall_seconds(train_rows)}
    train.update({key: column(train_rows, key, metrics) for key in TRAIN_KEYS})
    at_step = lambda steps: interpolate(steps, train["step"], train["wall_s"])

    valid = None
    if (run / "valid.jsonl").is_file():
        rows = read_jsonl(run / "valid.jsonl")
        valid = {"step": [r["step"] for r in rows]}
        valid["wall_s"] = at_step(valid["step"])
        valid.update({key: column(rows, key, run / "valid.jsonl") for key in VALID_KEYS})

    evals = {}
    for table in sorted((run / "eval").glob("watch-*.tsv")):
        rows = sorted(read_watch_table(table), key=lambda r: int(r["step"]))
        series = {"step": [int(r["step"]) for r in rows]}
        series["wall_s"] = at_step(series["step"])
        series.update({key: column(rows, key, table) for key in EVAL_KEYS})
        evals[table.stem[len("watch-"):]] = series
    return {"name": run.resolve().name, "train": train, "valid": valid, "eval": evals}
