#include "trainer/eval/evaluate_settings.h"

#include <CLI/CLI.hpp>

#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "trainer/eval/metrics/bleu_tokenizers.h"

namespace eval {

namespace {

// --resume's words but none: evaluate scores a checkpoint.
checkpoint::CheckpointChoice scored_checkpoint(const std::string& text) {
  const auto choice = checkpoint::CheckpointChoice::parse(text);
  if (choice.kind == checkpoint::CheckpointChoice::Kind::kNone)
    throw std::invalid_argument(
        "give latest, best or a checkpoint directory (none is a fresh "
        "start: no weights to score)");
  return choice;
}

void bind(settings::Schema& schema, EvaluateOptions& o) {
  settings::Section run(schema, "run");
  run("dir", "run", &o.run_dir, "the run directory (<run.out_dir>/<run.name>)");
  run("data", "data", &o.data_dir, "the dataset directory (default: the run's data.dir)");
  run("checkpoint", "checkpoint", &o.checkpoint,
      "latest, best or a checkpoint directory (the words of the trainer's --resume)",
      "latest|best|DIR", scored_checkpoint, &checkpoint::CheckpointChoice::text);
  run("average_last", "average-last", &o.average_last,
      "average the weights of the last N checkpoints up to --checkpoint");
  run("save_weights", "save-weights", &o.save_weights,
      "also write the (averaged) weights to this model.pt file");
  schema.require("run.dir");

  settings::Section job(schema, "job");
  job("watch", "watch", &o.watch, "score every checkpoint as it appears until the run is finished");
  job("poll_s", "poll-s", &o.poll_s, "--watch: seconds between looks for new checkpoints");
  job("translate", "translate", &o.translate,
      "translate (or classify) this file's lines (- for stdin) to stdout");

  settings::Section score(schema, "score");
  score("split", "split", &o.eval.split, "the dataset split to score");
  score("out", "out", &o.eval.out_dir,
        "the output directory (default: <run>/eval/<split>-<checkpoint>...)");
  std::vector<std::string> bleu_tokenizers = {"auto"};
  for (const auto& name : metrics::bleu_tokenizer_names()) bleu_tokenizers.push_back(name);
  score("bleu_tokenize", "bleu-tokenize", &o.eval.bleu_tokenize,
        "sacreBLEU's tokenizer: auto (char for char datasets, else 13a), 13a, char, zh, none",
        std::move(bleu_tokenizers));
  score("progress_s", "progress-s", &o.eval.progress_s,
        "seconds between progress lines (done, rate, ETA)");

  settings::Section decode(schema, "decode");
  decode("beam", "beam", &o.eval.decode.beam, "beam size (1 = greedy)");
  decode("length_penalty", "length-penalty", &o.eval.decode.length_penalty,
         "GNMT length penalty alpha for beam search");
  decode("max_extra_len", "max-extra-len", &o.eval.decode.max_extra_len,
         "decode at most source length + this many tokens");
  decode("batch_tokens", "batch-tokens", &o.eval.batch_tokens,
         "tokens per batch, padding included");

  settings::Section runtime(schema, "runtime");
  runtime("device", "device", &o.device, "auto (a GPU when there is one for the rank), cpu or cuda",
          choices::kDeviceNames);
  runtime("threads", "threads", &o.threads,
          "torch threads per rank (0 = the rank's share of its node's cores); on the CPU, "
          "decoding runs them each on a share of a batch's sentences where the model is small or "
          "each share has 32 rows (sentences times beams) at least, else each operation over "
          "all of them");
  runtime("keep_freed_memory", "keep-freed-memory", &o.keep_freed_memory,
          "malloc keeps the memory a decoding step frees for the next step's tensors (the peak "
          "stays resident); false: glibc's default");
}

// Numbers out of range, refused saying what is wanted.
void check_ranges(const settings::Schema& schema, const EvaluateOptions& o) {
  const auto require = [&schema](bool ok, const std::string& key, const std::string& what,
                                 double value) {
    if (ok) return;
    std::ostringstream text;
    text << schema.given(key) << ": must be " << what << ", not " << value;
    throw std::invalid_argument(text.str());
  };
  require(o.average_last >= 1, "run.average_last", "positive", o.average_last);
  require(o.poll_s >= 0, "job.poll_s", "non-negative", o.poll_s);
  require(o.eval.progress_s >= 0, "score.progress_s", "non-negative", o.eval.progress_s);
  require(o.eval.decode.beam >= 1, "decode.beam", "positive", o.eval.decode.beam);
  require(o.eval.decode.length_penalty >= 0, "decode.length_penalty", "non-negative",
          o.eval.decode.length_penalty);
  require(o.eval.decode.max_extra_len >= 0, "decode.max_extra_len", "non-negative",
          o.eval.decode.max_extra_len);
  require(o.eval.batch_tokens >= 1, "decode.batch_tokens", "positive", o.eval.batch_tokens);
  require(o.threads >= 0, "runtime.threads", "non-negative", o.threads);
}

// A job does one thing, scoring a split, watching a run or translating:
// options of another are refused, not silently ignored. (A job is chosen by
// its value: --watch=false chooses none.)
void check_one_job(const settings::Schema& schema, const EvaluateOptions& o) {
  const auto refuse = [&schema](bool chosen, const std::string& job, const std::string& other) {
    if (chosen && !schema.given(other).empty())
      throw std::invalid_argument(schema.given(job) + " excludes " + schema.given(other));
  };
  const bool translate = !o.translate.empty();
  for (const char* other :
       {"score.split", "score.out", "score.bleu_tokenize", "score.progress_s"})
    refuse(translate, "job.translate", other);
  if (translate && o.watch)
    throw std::invalid_argument(schema.given("job.translate") + " excludes " +
                                schema.given("job.watch"));
  for (const char* other : {"run.checkpoint", "run.average_last", "run.save_weights", "score.out"})
    refuse(o.watch, "job.watch", other);
  if (!schema.given("job.poll_s").empty() && !o.watch)
    throw std::invalid_argument(schema.given("job.poll_s") + " requires --watch (job.watch)");
}

}  // namespace

EvaluateSettings::EvaluateSettings(CLI::App& app) {
  bind(schema_, options_);
  schema_.add_config_file_and_cli(app, "TOML settings file (a [section] per table below)");
}

const EvaluateOptions& EvaluateSettings::resolve() {
  schema_.read_settings();
  check_ranges(schema_, options_);
  check_one_job(schema_, options_);
  return options_;
}

std::string EvaluateSettings::reference() const {
  return "# evaluate reference\n\n"
         "Generated by `evaluate --config-reference` from the schema evaluate reads its "
         "settings with (a test fails when this file and the program differ).\n\n"
         "Each key is given on the command line by its short name (`--run runs/base`, the "
         "meaning column names it) or as `--section.key value`, or in a TOML file (`--config "
         "eval.toml`, a `[section]` per table, `key = value`); the command line overrides the "
         "file, which overrides the defaults below. A job does one thing: `--translate` refuses "
         "`--watch` and the keys of `[score]`; `--watch` refuses `--checkpoint`, "
         "`--average-last`, `--save-weights` and `--out`; `--poll-s` needs `--watch`. What "
         "evaluate writes and how it scores is described in [evaluation.md](evaluation.md).\n" +
         schema_.to_markdown();
}

}  // namespace eval
