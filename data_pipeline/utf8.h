// UTF-8 code points: what the character tokenizer splits text into, and what
// the text metrics (trainer/eval/metrics/) count, as Python's str does.
//
// "春风" is 6 bytes but 2 code points; a byte-wise split would cut them apart.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace data {

// Byte length of the well-formed code point starting at text[pos], or 0 if
// the bytes there are not valid UTF-8 (stray continuation byte, truncated
// sequence, overlong form, surrogate, value above U+10FFFF).
size_t code_point_length(std::string_view text, size_t pos);

// Byte offset of the first invalid sequence, or npos if `text` is valid UTF-8.
size_t find_invalid_utf8(std::string_view text);

// The code points of `text`, each as a view into it. Throws
// std::invalid_argument on invalid UTF-8.
std::vector<std::string_view> split_code_points(std::string_view text);

// The code points of `text` as values (Python's str of the same bytes).
// Throws std::invalid_argument on invalid UTF-8.
std::u32string decode_utf8(std::string_view text);

// The UTF-8 bytes of `points`, which must be Unicode scalar values (as
// decode_utf8 returns).
std::string encode_utf8(std::u32string_view points);

}  // namespace data
