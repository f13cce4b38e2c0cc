"""A trained run as the exporters see it: its model config, its dataset's
tokenizer and special ids, and the weights of the chosen checkpoint(s).

The weights come from `evaluate --save-weights`, so that checkpoint selection
(latest, best, a directory), checksum verification and `--average-last N`
(float64 sums) are the C++ evaluation job's own, not a second implementation.
evaluate saves the weights once the model is loaded and then goes on to the
job it was given; the cheapest one is translating one line, so that is the
job it gets (its output is discarded).

What cannot be exported exactly is refused here or by the target, with a
message that names the reason and the format that can take the model
(`Refusal`).
"""
import json
import subprocess
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

import torch

SPECIALS = ("pad", "bos", "eos", "unk")


class Refusal(Exception):
    """The run cannot be exported exactly to the asked format (exit status 3)."""


@dataclass
class Vocabulary:
    kind: str  # word | char | spm
    tokens: list  # the token (or SentencePiece piece) of each id
    file: Path  # vocab*.txt, or the spm*.vocab beside the model
    spm_model: Path | None  # the SentencePiece model (spm only)


@dataclass
class Run:
    model: dict  # config.toml's [model] table, resolved by the trainer
    special: dict  # pad, bos, eos, unk -> id
    src: Vocabulary
    tgt: Vocabulary
    weights: dict  # state dict name -> float32 tensor

    @property
    def joint_vocabulary(self) -> bool:
        return self.src.file == self.tgt.file

    def weight(self, name: str) -> torch.Tensor:
        return self.weights[name]

    # Shared and tied tensors are saved once, under their owner's name.
    def embedding(self, side: str) -> torch.Tensor:
        if side == "tgt" and not self.model["share_embeddings"]:
            return self.weights["tgt_embed.lut.weight"]
        return self.weights["src_embed.lut.weight"]

    def generator_weight(self) -> torch.Tensor:
        if self.model["tie_output"]:
            return self.embedding("tgt")
        return self.weights["generator.weight"]


def read_vocabulary(data_dir: Path, kind: str, file: str) -> Vocabulary:
    path = data_dir / file
    if kind == "spm":  # spm*.model + spm*.vocab ("piece<TAB>score" per id)
        vocab = path.with_suffix(".vocab")
        tokens = [line.split("\t")[0] for line in vocab.read_text(encoding="utf-8").split("\n")[:-1]]
        return Vocabulary(kind, tokens, vocab, path)
    # One token per line, verbatim (a character vocabulary has a line holding a space).
    tokens = path.read_text(encoding="utf-8").split("\n")[:-1]
    return Vocabulary(kind, tokens, path, None)


def save_weights(evaluate: Path, run_dir: Path, checkpoint: str, average_last: int,
                 out_file: Path, data_dir: Path | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        one_line = Path(tmp) / "one_line.txt"
        one_line.write_text("x\n")
        command = [str(evaluate), "--run", str(run_dir), "--checkpoint", checkpoint,
                   "--average-last", str(average_last), "--save-weights", str(out_file),
                   "--translate", str(one_line), "--threads", "1", "--device", "cpu"]
        if data_dir is not None:
            command += ["--data", str(data_dir)]
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0 or not out_file.exists():
            raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")


def load_run(run_dir: Path, evaluate: Path, checkpoint: str = "latest", average_last: int = 1,
             data_dir: Path | None = None) -> Run:
    config = tomllib.loads((run_dir / "config.toml").read_text())
    data_dir = data_dir or Path(config["data"]["dir"])
    manifest = json.loads((data_dir / "manifest.json").read_text())
    if manifest["task"] != "seq2seq":
        raise Refusal(f"{run_dir} is a {manifest['task']} run: its classifier head (encoder outputs "
                      "averaged, then a linear layer to the classes) has no place in an encoder-decoder "
                      "translation format; neither CTranslate2's TransformerSpec nor transformers' "
                      "MarianMTModel can take it (evaluate --translate serves it)")
    tokenizer = manifest["tokenizer"]
    with tempfile.TemporaryDirectory() as tmp:
        weights_file = Path(tmp) / "model.pt"
        save_weights(evaluate, run_dir, checkpoint, average_last, weights_file, data_dir)
        weights = torch.load(weights_file, weights_only=True)
    return Run(model=config["model"],
               special={name: manifest["special_ids"][name] for name in SPECIALS},
               src=read_vocabulary(data_dir, tokenizer["kind"], tokenizer["src_file"]),
               tgt=read_vocabulary(data_dir, tokenizer["kind"], tokenizer["tgt_file"]),
               weights={name: t.float() for name, t in weights.items()})


def sinusoid_table(d_model: int, max_positions: int) -> torch.Tensor:
    """The model's positional encoding (trainer/model/positional_encoding.cpp),
    computed the same way: float64, then float32. Interleaved:
    PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d))."""
    position = torch.arange(max_positions, dtype=torch.float64).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64)
                         * (-torch.log(torch.tensor(10000.0, dtype=torch.float64)) / d_model))
    angle = position * div_term
    pe = torch.zeros(max_positions, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return pe.float()
