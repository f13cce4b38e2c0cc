#include "data_pipeline/prepare/parallel_text.h"

#include <optional>
#include <stdexcept>

namespace data {

namespace {

class TextPairs : public PairSource {
 public:
  TextPairs(std::filesystem::path src, std::filesystem::path tgt, const TextReadOptions& options)
      : src_(std::move(src)), tgt_(std::move(tgt)), strip_spaces_(options.strip_spaces) {
    if (options.cleaning) cleaning_ = *options.cleaning;
    const int64_t src_lines = count_lines(src_), tgt_lines = count_lines(tgt_);
    for (const auto& [file, lines] : {std::pair{src_, src_lines}, std::pair{tgt_, tgt_lines}})
      if (lines == 0) throw std::runtime_error("input file " + file.string() + " is empty");
    if (src_lines != tgt_lines)
      throw std::runtime_error("line counts differ: " + src_.string() + " has " +
                               std::to_string(src_lines) + " lines, " + tgt_.string() + " has " +
                               std::to_string(tgt_lines));
    size_ = src_lines;
  }

  int64_t size() const override { return size_; }

  void read(int64_t begin, int64_t end, CleaningReport& report,
            const std::function<void(SentencePair&)>& visit) const override {
    LineReader src(src_), tgt(tgt_);
    SentencePair pair;
    for (int64_t i = 0; i < end; ++i) {
      src.next(pair.src);
      tgt.next(pair.tgt);
      if (i < begin) continue;
      if (cleaning_ && !clean_pair(pair.src, pair.tgt, *cleaning_, report)) continue;
      if (strip_spaces_) {
        remove_spaces(pair.src);
        remove_spaces(pair.tgt);
      }
      pair.id = i;
      visit_line(src, visit, pair);
    }
  }

 private:
  std::filesystem::path src_, tgt_;
  std::optional<CleaningOptions> cleaning_;
  bool strip_spaces_;
  int64_t size_ = 0;
};

}  // namespace

void visit_line(const LineReader& lines, const std::function<void(SentencePair&)>& visit,
                SentencePair& pair) {
  try {
    visit(pair);
  } catch (const InputError& e) {
    throw std::runtime_error(lines.where() + ": " + e.what());
  }
}

std::unique_ptr<PairSource> text_pairs(const std::filesystem::path& src_file,
                                       const std::filesystem::path& tgt_file,
                                       const TextReadOptions& options) {
  return std::make_unique<TextPairs>(src_file, tgt_file, options);
}

}  // namespace data
