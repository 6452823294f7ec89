//===- ModuleCache.h - Compiled modules kept on disk ------------*- C++ -*-===//
//
// kiln::compile's persistent cache: the .kmod of a program, stored under a
// key that names everything its bytes depend on (the program after its
// rewrite for the ranks, the compile options, the host CPU and the
// compiler binary itself), so that a process compiling a program another
// process compiled before loads it instead (a worker that replaces a dead
// one in an elastic run, a script started again). Off unless a directory
// is given (JitOptions::cacheDir or KILN_CACHE_DIR).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_JIT_MODULECACHE_H
#define KILN_COMPILER_JIT_MODULECACHE_H

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {
namespace jit_cache {

/// The cache directory: \p configured, else $KILN_CACHE_DIR; empty: off.
std::string moduleCacheDirectory(const std::string &configured);

/// The key of a program (its MLIR text) compiled with \p options (every
/// option that changes the code, as text), for this host and this
/// compiler.
std::string moduleCacheKey(const std::string &program,
                           const std::string &options);

/// The module stored under \p key; false when there is none or it cannot
/// be read.
bool loadCachedModule(const std::string &directory, const std::string &key,
                      std::vector<uint8_t> &bytes);

/// Stores \p bytes under \p key (written whole or not at all: a temporary
/// file renamed into place). A directory that cannot be written is not an
/// error: the cache is an optimization.
void storeCachedModule(const std::string &directory, const std::string &key,
                       const std::vector<uint8_t> &bytes);

} // namespace jit_cache
} // namespace kiln

#endif // KILN_COMPILER_JIT_MODULECACHE_H
