#include "data_pipeline/prepare/labeled_text.h"

#include <optional>
#include <stdexcept>
#include <string>

namespace data {

namespace {

class LabeledText : public PairSource {
 public:
  LabeledText(std::filesystem::path file, const TextReadOptions& options)
      : file_(std::move(file)), strip_spaces_(options.strip_spaces), size_(count_lines(file_)) {
    if (options.cleaning) cleaning_ = *options.cleaning;
    if (size_ == 0) throw std::runtime_error("input file " + file_.string() + " is empty");
  }

  int64_t size() const override { return size_; }

  void read(int64_t begin, int64_t end, CleaningReport& report,
            const std::function<void(SentencePair&)>& visit) const override {
    LineReader lines(file_);
    std::string line;
    SentencePair pair;
    for (int64_t i = 0; i < end; ++i) {
      lines.next(line);
      if (i < begin) continue;
      const size_t tab = line.find('\t');
      if (tab == std::string::npos)
        throw std::runtime_error(lines.where() + ": no tab between the label and the text");
      if (tab == 0) throw std::runtime_error(lines.where() + ": empty label");
      pair.tgt.assign(line, 0, tab);
      pair.src.assign(line, tab + 1);
      if (cleaning_) {
        if (!clean_text(pair.src, *cleaning_, report)) continue;
      } else if (pair.src.find_first_not_of(" \t\v\f\r") == std::string::npos) {
        throw std::runtime_error(lines.where() + ": empty text");
      }
      if (strip_spaces_) remove_spaces(pair.src);
      pair.id = i;
      visit_line(lines, visit, pair);
    }
  }

 private:
  std::filesystem::path file_;
  std::optional<CleaningOptions> cleaning_;
  bool strip_spaces_;
  int64_t size_;
};

}  // namespace

std::unique_ptr<PairSource> labeled_text(const std::filesystem::path& file,
                                         const TextReadOptions& options) {
  return std::make_unique<LabeledText>(file, options);
}

}  // namespace data
