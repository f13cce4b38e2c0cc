#include "data_pipeline/prepare/parallel_text.h"

#include <fstream>
#include <stdexcept>

#include "data_pipeline/utf8.h"

namespace data {

namespace {

std::ifstream open_text(const std::filesystem::path& file) {
  if (!std::filesystem::is_regular_file(file))
    throw std::runtime_error("input file " + file.string() + " does not exist or is not a file");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open input file " + file.string());
  return in;
}

int64_t count_lines(const std::filesystem::path& file) {
  std::ifstream in = open_text(file);
  int64_t lines = 0;
  char buffer[1 << 16];
  bool pending = false;  // a last line without "\n"
  while (in.read(buffer, sizeof(buffer)) || in.gcount() > 0) {
    for (std::streamsize i = 0; i < in.gcount(); ++i) lines += buffer[i] == '\n';
    pending = buffer[in.gcount() - 1] != '\n';
  }
  if (in.bad()) throw std::runtime_error("error reading input file " + file.string());
  return lines + (pending ? 1 : 0);
}

// The next line of `in` without "\n" or "\r\n", UTF-8 checked (`line` is 1-based).
void next_line(std::ifstream& in, const std::filesystem::path& file, int64_t line, std::string& out) {
  if (!std::getline(in, out))
    throw std::runtime_error("input file " + file.string() + " ended before line " +
                             std::to_string(line) + " (changed while being read?)");
  if (!out.empty() && out.back() == '\r') out.pop_back();
  const size_t bad = find_invalid_utf8(out);
  if (bad != std::string::npos)
    throw std::runtime_error(file.string() + ":" + std::to_string(line) + ": invalid UTF-8 at byte " +
                             std::to_string(bad));
}

class TextPairs : public PairSource {
 public:
  TextPairs(std::filesystem::path src, std::filesystem::path tgt, const CleaningOptions* cleaning)
      : src_(std::move(src)), tgt_(std::move(tgt)) {
    if (cleaning) cleaning_ = *cleaning;
    clean_ = cleaning != nullptr;
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
    std::ifstream src = open_text(src_), tgt = open_text(tgt_);
    SentencePair pair;
    for (int64_t i = 0; i < end; ++i) {
      next_line(src, src_, i + 1, pair.src);
      next_line(tgt, tgt_, i + 1, pair.tgt);
      if (i < begin) continue;
      if (clean_ && !clean_pair(pair.src, pair.tgt, cleaning_, report)) continue;
      pair.id = i;
      visit(pair);
    }
  }

 private:
  std::filesystem::path src_, tgt_;
  CleaningOptions cleaning_;
  bool clean_ = false;
  int64_t size_ = 0;
};

class MemoryPairs : public PairSource {
 public:
  explicit MemoryPairs(ParallelText text) : text_(std::move(text)) {}
  int64_t size() const override { return static_cast<int64_t>(text_.src.size()); }
  void read(int64_t begin, int64_t end, CleaningReport&,
            const std::function<void(SentencePair&)>& visit) const override {
    SentencePair pair;
    for (int64_t i = begin; i < end; ++i) {
      pair = {i, text_.src[i], text_.tgt[i]};
      visit(pair);
    }
  }

 private:
  ParallelText text_;
};

}  // namespace

std::unique_ptr<PairSource> text_pairs(const std::filesystem::path& src_file,
                                       const std::filesystem::path& tgt_file,
                                       const CleaningOptions* cleaning) {
  return std::make_unique<TextPairs>(src_file, tgt_file, cleaning);
}

std::unique_ptr<PairSource> memory_pairs(ParallelText text) {
  return std::make_unique<MemoryPairs>(std::move(text));
}

}  // namespace data
