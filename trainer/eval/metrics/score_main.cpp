// score: corpus BLEU and chrF of text files, as sacreBLEU computes them, with
// the n-gram statistics and signatures, as one JSON object on stdout:
//
//   score hyps.txt refs.txt [more_refs.txt ...] [--tokenize zh] [--smooth-method floor]
//   {"bleu": {"score": 27.3, "counts": [...], "totals": [...], "precisions": [...], "bp": 1.0,
//             "sys_len": 120, "ref_len": 118, "signature":
//             "nrefs:1|case:mixed|eff:no|tok:13a|..."},
//    "chrf": {"score": 55.1, "name": "chrF2", "statistics": [[hyp, ref, match], ...],
//             "signature": "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|..."}}
//
// Options are sacreBLEU's (`sacrebleu -h`). A file is split at "\n" only and
// nothing else is removed: a final "\n" ends the last line, every other "\n"
// separates two lines (so empty lines count). Torch-free; the test suite
// compares it with sacreBLEU itself (tests/eval/sacrebleu_reference.sh).
//
// Exit status: 0 done, 1 unreadable file, invalid UTF-8 or mismatched line counts, 2 bad usage.
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "data_pipeline/utf8.h"
#include "trainer/eval/metrics/bleu.h"
#include "trainer/eval/metrics/chrf.h"

namespace {

// The lines of `file`; errors name the file (and line).
std::vector<std::string> read_lines(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + file);
  std::ostringstream text;
  text << in.rdbuf();
  std::vector<std::string> lines;
  std::istringstream stream(text.str());
  for (std::string line; std::getline(stream, line);) {
    const size_t bad = data::find_invalid_utf8(line);
    if (bad != std::string::npos)
      throw std::runtime_error(file + ":" + std::to_string(lines.size() + 1) +
                               ": invalid UTF-8 at byte " + std::to_string(bad + 1));
    lines.push_back(line);
  }
  return lines;
}

nlohmann::json bleu_json(const eval::metrics::BleuScore& bleu) {
  return {{"score", bleu.score},     {"counts", bleu.counts},
          {"totals", bleu.totals},   {"precisions", bleu.precisions},
          {"bp", bleu.bp},           {"sys_len", bleu.sys_len},
          {"ref_len", bleu.ref_len}, {"signature", bleu.signature}};
}

nlohmann::json chrf_json(const eval::metrics::ChrfScore& chrf) {
  nlohmann::json statistics = nlohmann::json::array();
  for (const auto& order : chrf.statistics)
    statistics.push_back({order.hyp, order.ref, order.match});
  return {{"score", chrf.score},
          {"name", chrf.name},
          {"statistics", statistics},
          {"signature", chrf.signature}};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Corpus BLEU and chrF of a hypothesis file against reference files, as sacreBLEU"};
  std::string hypotheses_file;
  std::vector<std::string> reference_files;
  eval::metrics::BleuOptions bleu;
  eval::metrics::ChrfOptions chrf;
  double smooth_value = -1;
  bool lowercase = false;
  app.add_option("hypotheses", hypotheses_file, "system output, one segment a line")->required();
  app.add_option("references", reference_files, "reference files, one stream each")->required();
  app.add_option("--tokenize,--tok", bleu.tokenize, "BLEU tokenizer: 13a, zh, char, none")
      ->capture_default_str();
  app.add_option("--smooth-method", bleu.smooth_method, "BLEU smoothing: exp, floor, add-k, none")
      ->capture_default_str();
  app.add_option("--smooth-value", smooth_value, "floor and add-k value (default 0.1 and 1)");
  app.add_option("--max-ngram-order", bleu.max_ngram_order, "BLEU n-gram order")
      ->capture_default_str();
  app.add_flag("--effective-order", bleu.effective_order,
               "BLEU over the orders the hypotheses have");
  app.add_flag("--lowercase,--lc", lowercase, "lowercase before scoring (BLEU and chrF)");
  app.add_option("--chrf-char-order", chrf.char_order, "chrF character n-gram order")
      ->capture_default_str();
  app.add_option("--chrf-word-order", chrf.word_order, "chrF word n-gram order (2: chrF++)")
      ->capture_default_str();
  app.add_option("--chrf-beta", chrf.beta, "chrF recall weight")->capture_default_str();
  app.add_flag("--chrf-whitespace", chrf.whitespace, "keep whitespace in character n-grams");
  app.add_flag("--chrf-eps-smoothing", chrf.eps_smoothing,
               "chrF++.py's smoothing (signature eff:no)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints help or the usage error
    return e.get_exit_code() == 0 ? 0 : 2;
  }
  if (smooth_value >= 0) bleu.smooth_value = smooth_value;
  bleu.lowercase = chrf.lowercase = lowercase;
  try {
    const std::vector<std::string> hypotheses = read_lines(hypotheses_file);
    std::vector<std::vector<std::string>> references;
    for (const std::string& file : reference_files) {
      references.push_back(read_lines(file));
      if (references.back().size() != hypotheses.size())
        throw std::runtime_error(file + " has " + std::to_string(references.back().size()) +
                                 " lines, " + hypotheses_file + " " +
                                 std::to_string(hypotheses.size()));
    }
    const nlohmann::json out = {
        {"bleu", bleu_json(eval::metrics::corpus_bleu(hypotheses, references, bleu))},
        {"chrf", chrf_json(eval::metrics::corpus_chrf(hypotheses, references, chrf))}};
    std::cout << out.dump(2) << "\n";
  } catch (const std::exception& e) {
    std::cerr << "score: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
