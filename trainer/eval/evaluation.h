// Scoring one dataset split with a loaded model (eval_model.h):
//
//   loss / perplexity   teacher-forced, the training loss without dropout
//   decoding            greedy or beam search (decode.h), hypotheses
//                       detokenized, in input order -> hypotheses.txt
//   metrics             exact match (token ids), BLEU and chrF against the
//                       reference text (eval/metrics/)
//
// Under `mpirun -np N` batch i is scored by rank i mod N and rank 0 gathers
// everything: the batches are the same for any N (length-sorted, cut by
// --batch-tokens), so the output equals a one-rank run's.
//
// Rank 0 writes <out_dir>/hypotheses.txt and <out_dir>/results.json.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "launch/process.h"
#include "launch/ranks.h"
#include "trainer/eval/decode.h"
#include "trainer/eval/eval_model.h"

namespace eval {

struct EvalOptions {
  std::string split = "test";
  std::filesystem::path out_dir;  // where results go
  int64_t batch_tokens = 4096;  // per evaluation batch, padding included
  DecodeOptions decode;
  std::string bleu_tokenize =
      "auto";              // sacreBLEU tokenizer; auto: char for char datasets, else 13a
  double progress_s = 10;  // rank 0 logs progress and ETA this often (base/progress.h)
};

// The results (rank 0; null elsewhere). Collective over `ranks`; the
// split's shards are checked by one rank of each node (`process`'s place:
// data_pipeline/node_check.h).
nlohmann::json evaluate_split(EvalModel& m, const EvalOptions& options, const launch::Ranks& ranks,
                              const launch::ProcessInfo& process);

}  // namespace eval
