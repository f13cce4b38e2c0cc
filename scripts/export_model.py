"""Export a trained run to CTranslate2 or Hugging Face transformers.

    scripts/setup_export.sh     # once: .venv/torch with the pinned transformers, ctranslate2, sentencepiece
    .venv/torch/bin/python scripts/export_model.py --run runs/base --format ct2 --out export/ct2 \\
        [--checkpoint latest|best|DIR] [--average-last N] [--data DIR] [--evaluate build/bin/evaluate]

Writes OUT in the target's own layout (docs/export.md): the weights, the
configuration and the tokenizer (SentencePiece model, vocabulary, special ids).
Exit status: 0 exported, 1 error, 2 bad usage, 3 refused (the message names
the reason and the format that can take the model).
"""
import argparse
import sys
from pathlib import Path

from export_run import Refusal, load_run

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--run", type=Path, required=True, help="run directory (runs/<name>)")
    parser.add_argument("--format", choices=("ct2", "hf"), required=True)
    parser.add_argument("--out", type=Path, required=True, help="output directory (new or empty)")
    parser.add_argument("--checkpoint", default="latest", help="latest, best or a checkpoint directory")
    parser.add_argument("--average-last", type=int, default=1,
                        help="average the last N checkpoints up to --checkpoint (evaluate's averaging)")
    parser.add_argument("--data", type=Path, help="dataset directory (default: the run's data.dir)")
    parser.add_argument("--evaluate", type=Path, default=ROOT / "build/bin/evaluate",
                        help="the evaluate program, which selects and averages the weights")
    args = parser.parse_args()
    try:
        run = load_run(args.run, args.evaluate, args.checkpoint, args.average_last, args.data)
        if args.format == "ct2":
            from export_ct2 import export_ct2 as export
        else:
            from export_hf import export_hf as export
        if args.out.exists() and any(args.out.iterdir()):
            raise RuntimeError(f"{args.out} exists and is not empty: remove it or name another")
        args.out.mkdir(parents=True, exist_ok=True)
        export(run, args.out)
    except Refusal as refusal:
        print(f"export: refused: {refusal}", file=sys.stderr)
        return 3
    except (OSError, RuntimeError, KeyError, ValueError) as error:
        print(f"export: {error}", file=sys.stderr)
        return 1
    print(f"export: {args.run} ({args.checkpoint}, {args.average_last} checkpoint(s)) -> "
          f"{args.out} ({args.format})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
