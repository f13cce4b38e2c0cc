"""Runs that train the same trajectory, to float tolerance: their last
checkpoints' parameters and the losses they logged, against a reference run.

    python tests/trajectory.py <rtol> <reference run> <run>...   # in the directory holding runs/

Each run's parameters differ from the reference's by less than rtol of the
tensor's largest magnitude; each step a run logged, the reference logged too,
with the same loss to rtol, and both end at the same step. Run by the script
tests' Python (TEST_PYTHON: torch).
"""
import json
import sys

import torch


def parameters(run):
    return torch.load(f"runs/{run}/checkpoints/latest/model.pt", weights_only=True)


def losses(run):
    return {r["step"]: r["loss"] for r in map(json.loads, open(f"runs/{run}/metrics.jsonl"))}


def comparable(name, t):
    # The key bias b^K has an exactly zero gradient (softmax is invariant to
    # adding q.b^K to every score of a row); Adam turns its rounding noise into
    # full-size steps, so it is left out of the comparison.
    if name.endswith("in_proj_bias"):
        d = t.numel() // 3
        return torch.cat([t[:d], t[2 * d:]])
    return t


def max_relative_difference(a, b):
    assert a.keys() == b.keys(), sorted(set(a) ^ set(b))
    return max(((comparable(k, b[k]) - comparable(k, a[k])).abs().max() /
                comparable(k, a[k]).abs().max().clamp_min(1e-12)).item() for k in a)


def main(rtol, reference, runs):
    ref_params, ref_losses = parameters(reference), losses(reference)
    for run in runs:
        worst = max_relative_difference(ref_params, parameters(run))
        got = losses(run)
        differ = {step: (loss, ref_losses.get(step)) for step, loss in got.items()
                  if step not in ref_losses
                  or abs(loss - ref_losses[step]) > rtol * abs(ref_losses[step])}
        print(f"{run} vs {reference}: max relative parameter difference {worst:.2e}, "
              f"{len(got) - len(differ)} of {len(got)} logged losses agree")
        assert got and max(got) == max(ref_losses), (run, sorted(got), sorted(ref_losses))
        assert not differ, f"{run}: losses (run, {reference}) by step: {differ}"
        assert worst < rtol, f"{run} differs from {reference} by {worst:.2e} (rtol {rtol})"


if __name__ == "__main__":
    main(float(sys.argv[1]), sys.argv[2], sys.argv[3:])
