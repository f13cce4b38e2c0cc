#include "trainer/eval/text_metrics.h"

#include "trainer/eval/metrics/bleu.h"
#include "trainer/eval/metrics/chrf.h"

namespace eval {

nlohmann::json text_metrics(const std::vector<std::string>& hypotheses,
                            const std::vector<std::string>& references,
                            const std::string& bleu_tokenize,
                            data::TokenizerKind dataset_tokenizer) {
  metrics::BleuOptions bleu_options;
  bleu_options.tokenize = bleu_tokenize != "auto"                           ? bleu_tokenize
                          : dataset_tokenizer == data::TokenizerKind::kChar ? "char"
                                                                            : "13a";
  const metrics::BleuScore bleu = metrics::corpus_bleu(hypotheses, {references}, bleu_options);
  const metrics::ChrfScore chrf = metrics::corpus_chrf(hypotheses, {references});
  return {{"bleu",
           {{"score", bleu.score},
            {"signature", bleu.signature},
            {"precisions", bleu.precisions},
            {"bp", bleu.bp},
            {"sys_len", bleu.sys_len},
            {"ref_len", bleu.ref_len}}},
          {"chrf", {{"score", chrf.score}, {"name", chrf.name}, {"signature", chrf.signature}}}};
}

}  // namespace eval
