#!/usr/bin/env python3
"""A run's curves as TensorBoard event files, so that `tensorboard --logdir runs`
shows them:

    scripts/to_tensorboard.py RUN_DIR [RUN_DIR ...]

writes RUN_DIR/tensorboard/{train,valid,watch-<split>}/events.out.tfevents.*
(made afresh each time: run it again as training goes on). Scalars by step,
with the same tags across the three, so TensorBoard overlays train and valid
loss in one chart:

    train          loss, nll, ppl, lr, grad_norm, tokens_per_s
    valid          loss, nll, ppl
    watch-<split>  loss, ppl, bleu, chrf, exact_match, accuracy (those that apply)

An event's wall time is the run's start (config.toml's modification time)
plus the training time at its step (run_files.py), so TensorBoard's
"relative" axis is training time.
Run with the tools' venv: py=$(scripts/setup_python.sh); "$py" scripts/to_tensorboard.py ...

Exit status: 0 done, 1 unreadable run files (the message names the file), 2 bad usage.
"""
import argparse
import math
import shutil
import sys
from pathlib import Path

from tensorboard.compat.proto.event_pb2 import Event
from tensorboard.compat.proto.summary_pb2 import Summary
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from run_files import EVAL_KEYS, TRAIN_KEYS, VALID_KEYS, RunError, read_run


def write_series(log_dir, series, keys, start_time):
    """One event per step with the scalars of `keys` that have a value there."""
    writer = EventFileWriter(str(log_dir))
    for i, step in enumerate(series["step"]):
        values = [Summary.Value(tag=key, simple_value=series[key][i])
                  for key in keys if series[key][i] is not None]
        wall = series["wall_s"][i]
        if values:
            writer.add_event(Event(step=step, wall_time=start_time + (0 if math.isnan(wall) else wall),
                                   summary=Summary(value=values)))
    writer.close()


def convert(run_dir):
    run = read_run(run_dir)
    start_time = (Path(run_dir) / "config.toml").stat().st_mtime
    out = Path(run_dir) / "tensorboard"
    shutil.rmtree(out, ignore_errors=True)
    write_series(out / "train", run["train"], TRAIN_KEYS, start_time)
    if run["valid"]:
        write_series(out / "valid", run["valid"], VALID_KEYS, start_time)
    for split, series in run["eval"].items():
        write_series(out / f"watch-{split}", series, EVAL_KEYS, start_time)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR")
    args = parser.parse_args()
    for run_dir in args.runs:
        try:
            print(f"to_tensorboard: {convert(run_dir)}")
        except (RunError, OSError) as e:
            print(f"to_tensorboard: {e}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
