//===- NpyHeader.cpp - The .npy header dictionary --------------------------===//

#include "NpyHeader.h"

#include <cstdint>
#include <limits>

namespace kiln {
namespace npy {

namespace {

/// A recursive-descent parser over the header text. Each method consumes
/// what it parses and reports failure through `error`.
class Parser {
public:
  explicit Parser(const std::string &text) : text(text) {}

  bool parse(HeaderDict &out, std::string &error) {
    bool haveDescr = false, haveOrder = false, haveShape = false;
    skipSpace();
    if (!expect('{'))
      return fail("the header is not a dict literal", error);
    skipSpace();
    while (!peek('}')) {
      std::string key;
      if (!parseString(key))
        return fail("expected a quoted key", error);
      skipSpace();
      if (!expect(':'))
        return fail("expected ':' after key '" + key + "'", error);
      skipSpace();
      if (key == "descr") {
        if (haveDescr)
          return fail("duplicate key 'descr'", error);
        haveDescr = true;
        if (!parseString(out.descr))
          return fail("'descr' must be a quoted string (structured dtypes "
                      "are not supported)",
                      error);
      } else if (key == "fortran_order") {
        if (haveOrder)
          return fail("duplicate key 'fortran_order'", error);
        haveOrder = true;
        if (!parseBool(out.fortranOrder))
          return fail("'fortran_order' must be True or False", error);
      } else if (key == "shape") {
        if (haveShape)
          return fail("duplicate key 'shape'", error);
        haveShape = true;
        if (!parseShape(out.shape, error))
          return false;
      } else {
        return fail("unexpected key '" + key + "'", error);
      }
      skipSpace();
      if (expect(','))
        skipSpace();
      else if (!peek('}'))
        return fail("expected ',' or '}'", error);
    }
    ++position;
    skipSpace();
    if (position != text.size())
      return fail("unexpected text after the dict", error);
    if (!haveDescr)
      return fail("missing key 'descr'", error);
    if (!haveOrder)
      return fail("missing key 'fortran_order'", error);
    if (!haveShape)
      return fail("missing key 'shape'", error);
    return true;
  }

private:
  bool fail(const std::string &message, std::string &error) const {
    error = "bad header: " + message + " (at offset " +
            std::to_string(position) + " of the header dict)";
    return false;
  }

  bool atEnd() const { return position >= text.size(); }
  bool peek(char c) const { return !atEnd() && text[position] == c; }
  bool expect(char c) {
    if (!peek(c))
      return false;
    ++position;
    return true;
  }
  void skipSpace() {
    while (!atEnd() && (text[position] == ' ' || text[position] == '\t' ||
                        text[position] == '\n' || text[position] == '\r'))
      ++position;
  }
  bool expectWord(const char *word) {
    std::string expected(word);
    if (text.compare(position, expected.size(), expected) != 0)
      return false;
    position += expected.size();
    return true;
  }

  /// A Python string literal in single or double quotes. numpy never writes
  /// escapes in the keys and descriptors of plain arrays, so none are
  /// accepted.
  bool parseString(std::string &out) {
    if (atEnd() || (text[position] != '\'' && text[position] != '"'))
      return false;
    char quote = text[position];
    size_t end = text.find(quote, position + 1);
    if (end == std::string::npos)
      return false;
    std::string value = text.substr(position + 1, end - position - 1);
    if (value.find('\\') != std::string::npos ||
        value.find('\n') != std::string::npos)
      return false;
    out = value;
    position = end + 1;
    return true;
  }

  bool parseBool(bool &out) {
    if (expectWord("True")) {
      out = true;
      return true;
    }
    if (expectWord("False")) {
      out = false;
      return true;
    }
    return false;
  }

  /// A non-negative decimal integer; the 'L' suffix of files written by
  /// Python 2 is accepted.
  bool parseDimension(int64_t &out, std::string &error) {
    size_t start = position;
    uint64_t value = 0;
    while (!atEnd() && text[position] >= '0' && text[position] <= '9') {
      uint64_t digit = static_cast<uint64_t>(text[position] - '0');
      if (value > (std::numeric_limits<int64_t>::max() - digit) / 10) {
        position = start;
        return fail("a dimension of 'shape' is too large", error);
      }
      value = value * 10 + digit;
      ++position;
    }
    if (position == start) {
      if (peek('-'))
        return fail("'shape' has a negative dimension", error);
      return fail("'shape' must be a tuple of non-negative integers", error);
    }
    expect('L');
    out = static_cast<int64_t>(value);
    return true;
  }

  bool parseShape(std::vector<int64_t> &out, std::string &error) {
    if (!expect('('))
      return fail("'shape' must be a tuple of non-negative integers", error);
    out.clear();
    bool trailingComma = false;
    skipSpace();
    while (!peek(')')) {
      int64_t dim;
      if (!parseDimension(dim, error))
        return false;
      out.push_back(dim);
      skipSpace();
      trailingComma = expect(',');
      if (trailingComma)
        skipSpace();
      else if (!peek(')'))
        return fail("expected ',' or ')' in 'shape'", error);
    }
    ++position;
    // "(3)" is the integer 3 in Python, not a tuple.
    if (out.size() == 1 && !trailingComma)
      return fail("'shape' must be a tuple; a one-element tuple needs a "
                  "trailing comma",
                  error);
    return true;
  }

  const std::string &text;
  size_t position = 0;
};

} // namespace

bool parseHeaderDict(const std::string &text, HeaderDict &out,
                     std::string &error) {
  HeaderDict header;
  if (!Parser(text).parse(header, error))
    return false;
  out = std::move(header);
  return true;
}

std::string formatHeaderDict(const std::string &descr,
                             const std::vector<int64_t> &shape) {
  std::string text = "{'descr': '" + descr +
                     "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      text += ", ";
    text += std::to_string(shape[i]);
  }
  if (shape.size() == 1)
    text += ",";
  return text + "), }";
}

} // namespace npy
} // namespace kiln
