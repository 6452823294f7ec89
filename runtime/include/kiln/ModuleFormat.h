//===- ModuleFormat.h - Reading and writing .kmod modules -------*- C++ -*-===//
//
// The .kmod file is the contract between kiln-compile and the runtime. This
// header describes a module as plain C++ values and converts them to and from
// bytes. It deliberately exposes no FlatBuffers types, so that the compiler
// can produce modules without seeing the serialization library, and so that
// the schema's generated code stays an implementation detail.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_MODULEFORMAT_H
#define KILN_MODULEFORMAT_H

#include "kiln/ConstantsAbi.h"
#include "kiln/ElementType.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <new>
#include <string>
#include <vector>

namespace kiln {
namespace format {

/// The format version this library writes. Version 2 added the body's
/// constant pool (which a version 1 reader would ignore, leaving the code to
/// read through a null base) and checksums bodies with CRC32C instead of
/// FNV-1a, which reads at a few bytes per cycle rather than one byte per
/// multiply: a transformer's module is hundreds of megabytes.
constexpr uint32_t kFormatVersion = 2;

/// The oldest format version this library reads. A reader refuses every
/// other version instead of guessing at a layout it does not know.
constexpr uint32_t kOldestFormatVersion = 1;

/// Element types, stored in modules by their code (see kiln/ElementType.h).
/// The schema's DType enum is checked against the list when this library
/// compiles.
using DType = ElementType;

/// Number of DType enumerators; values at or above it are not element types.
constexpr unsigned kNumDTypes = kNumElementTypes;

/// Returns true if \p dtype is one of the element types. Values read from a
/// file may be anything, so every consumer must ask before using one.
inline bool isValidDType(DType dtype) { return isValidElementType(dtype); }

/// Returns the short lowercase name ("f32", "i1", ...) of \p dtype, or
/// "invalid" for a value that is not an element type.
inline const char *dtypeName(DType dtype) { return elementTypeName(dtype); }

/// Returns the storage size in bytes of one element (i1 occupies one byte),
/// or 0 for a value that is not an element type.
inline size_t dtypeSize(DType dtype) { return elementTypeSize(dtype); }

/// Asks the kernel to back the 2 MiB pages that lie wholly within
/// [data, data + size) with huge pages, where it supports that (Linux's
/// transparent huge pages in their "madvise" mode). Filling a fresh buffer
/// of a model's weights otherwise takes a page fault every 4 KiB, which
/// costs more than copying the bytes. Call it before the bytes are first
/// written; it does nothing for buffers under a few megabytes.
void adviseHugePages(void *data, size_t size);

/// An allocator of storage aligned to KILN_CONSTANTS_ALIGNMENT (a cache
/// line), for bytes that code reads with aligned vector loads; large blocks
/// get huge pages.
template <typename T> struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlignment{KILN_CONSTANTS_ALIGNMENT};
  CacheLineAllocator() = default;
  template <typename U> CacheLineAllocator(const CacheLineAllocator<U> &) {}
  T *allocate(size_t count) {
    void *block = ::operator new(count * sizeof(T), kAlignment);
    adviseHugePages(block, count * sizeof(T));
    return static_cast<T *>(block);
  }
  void deallocate(T *pointer, size_t) {
    ::operator delete(pointer, kAlignment);
  }
  template <typename U> bool operator==(const CacheLineAllocator<U> &) const {
    return true;
  }
  template <typename U> bool operator!=(const CacheLineAllocator<U> &) const {
    return false;
  }
};

/// A module's constant pool: bytes aligned to KILN_CONSTANTS_ALIGNMENT in
/// memory.
using ConstantBytes = std::vector<uint8_t, CacheLineAllocator<uint8_t>>;

/// One input or output of a function: a dense, row-major tensor with a fully
/// static shape. An empty shape is a rank-0 tensor holding one element. The
/// name is optional (it may be empty) and only serves diagnostics and tools.
struct TensorSignature {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// For an output: the donated input whose buffer it is written into, or
  /// -1 (kmod.fbs). Always -1 for an input.
  int64_t tiedInput = -1;
};

/// A callable entry point of a module. `entrySymbol` names the native
/// function `void entry(void **args)` in the module's code object.
struct FunctionSignature {
  std::string name;
  std::string entrySymbol;
  std::vector<TensorSignature> inputs;
  std::vector<TensorSignature> outputs;
};

/// Everything a module holds: the target triple the code was built for, the
/// functions it exposes, the bytes of an ELF shared object defining them and
/// the constants that code reads.
struct ModuleContents {
  std::string target;
  std::vector<FunctionSignature> functions;
  std::vector<uint8_t> code;
  /// For a CUDA target ("cuda-sm_XX"): the PTX of the kernels, which the
  /// code embeds as well. Empty for CPU modules; not written when empty.
  std::vector<uint8_t> deviceCode;
  /// The bytes the code reads through its constant slot (a CPU module's
  /// large constants, kiln/ConstantsAbi.h); not written when empty.
  ConstantBytes constants;
  /// Where readModule left the constants when asked to leave them in the
  /// buffer it read (ConstantsPlacement::InBufferIfAligned): their first
  /// byte inside that buffer, `constants` staying empty; NULL when they
  /// were copied into `constants` (or there are none). writeModule reads
  /// `constants` only.
  const uint8_t *constantsInBuffer = nullptr;
  size_t constantsInBufferSize = 0;
};

/// Where readModule puts a module's constants.
enum class ConstantsPlacement {
  /// Copied into ModuleContents::constants.
  Copy,
  /// Left in the buffer read, where the writer places them at
  /// KILN_CONSTANTS_ALIGNMENT from the buffer's start: for a buffer with
  /// that alignment, ModuleContents::constantsInBuffer points at them and
  /// the caller keeps the buffer for as long as they are read (a
  /// transformer's weights are not copied a second time). They are copied
  /// as with Copy where they do not lie aligned in the caller's bytes.
  InBufferIfAligned,
};

/// Checks the rules every module must satisfy beyond being well-formed bytes:
/// at least one function; function names and entry symbols non-empty and free
/// of NUL characters; function names unique; tensor names free of NUL
/// characters; known element types; non-negative dimensions whose element
/// and byte counts fit in 63 bits; code that starts with the ELF magic.
/// Returns false and describes the first violation, with its location, in
/// \p error. Writers should call this before writeModule; readModule always
/// does.
bool validateModule(const ModuleContents &contents, std::string &error);

/// Serializes \p contents in the current format version. The result is
/// deterministic: equal contents give identical bytes. No validation is
/// performed, so that tests can produce invalid modules on purpose.
std::vector<uint8_t> writeModule(const ModuleContents &contents);

/// Serializes \p contents as writeModule does, except that the constants
/// (`contents.constants` is ignored) are \p constantsSize bytes that
/// \p writeConstants writes, once, straight into their zeroed place in the
/// result: a compiler hands over a transformer's weights without copying
/// them into a buffer of their own first.
std::vector<uint8_t>
writeModule(const ModuleContents &contents, size_t constantsSize,
            const std::function<void(uint8_t *)> &writeConstants);

/// Parses the module in [data, data + size). Every structural and semantic
/// property is verified before anything is copied, so on failure \p out is
/// left untouched, and \p error says what is wrong and where. The buffer
/// needs no particular alignment. \p placement says whether the constants
/// are copied or may be left in the buffer.
bool readModule(const void *data, size_t size, ModuleContents &out,
                std::string &error,
                ConstantsPlacement placement = ConstantsPlacement::Copy);

/// The 64-bit FNV-1a hash of [data, data + size): the checksum a version 1
/// module stores for its body bytes.
uint64_t fnv1a64(const void *data, size_t size);

/// The checksum a module of format `version` stores for its body bytes
/// [data, data + size): fnv1a64 for version 1, CRC32C (kiln/Crc32c.h)
/// zero-extended from version 2 on.
uint64_t bodyChecksum(uint32_t version, const void *data, size_t size);

} // namespace format
} // namespace kiln

#endif // KILN_MODULEFORMAT_H
