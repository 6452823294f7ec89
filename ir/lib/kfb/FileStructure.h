//===- FileStructure.h - The outer checks of a .kfb file --------*- C++ -*-===//
//
// What must hold before any field of a .kfb file may be read: the size, the
// file identifier, the format version and the FlatBuffers verifier. The
// reader runs these first; the writer runs them on its own output so that it
// can never produce a file the reader refuses for its structure (a model
// nested too deeply, say).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_KFB_FILESTRUCTURE_H
#define KILN_LIB_KFB_FILESTRUCTURE_H

#include "kfb_generated.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace kiln {
namespace modelfile {

/// How deeply tables may nest. Each level of control flow takes three
/// (operation, region, block), so this allows about 80 nested loops.
constexpr unsigned kMaxTableDepth = 256;

/// Checks the \p size bytes at \p bytes, which must be 8-byte aligned, and
/// returns the root table, or null with \p error saying why the file cannot
/// be read at all.
const kfb::Model *verifyFileStructure(const uint8_t *bytes, size_t size,
                                      std::string &error);

} // namespace modelfile
} // namespace kiln

#endif // KILN_LIB_KFB_FILESTRUCTURE_H
