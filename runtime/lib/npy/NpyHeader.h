//===- NpyHeader.h - The .npy header dictionary -----------------*- C++ -*-===//
//
// A .npy header is the Python literal of a dict with exactly the keys
// 'descr', 'fortran_order' and 'shape'. This is a parser for the small
// subset of Python literal syntax such a dict can use, and its inverse.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_NPY_NPYHEADER_H
#define KILN_RUNTIME_LIB_NPY_NPYHEADER_H

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {
namespace npy {

struct HeaderDict {
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
};

/// Parses \p text, the header without the magic and length prefix. Trailing
/// whitespace (the padding numpy adds) is allowed; anything else is an error
/// described in \p error.
bool parseHeaderDict(const std::string &text, HeaderDict &out,
                     std::string &error);

/// Formats a C-order header the way numpy does, without padding, e.g.
/// "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }".
std::string formatHeaderDict(const std::string &descr,
                             const std::vector<int64_t> &shape);

} // namespace npy
} // namespace kiln

#endif // KILN_RUNTIME_LIB_NPY_NPYHEADER_H
