//===- Threefry.h - The Threefry-2x32 block cipher, written once -*- C++ -*-===//
//
// kiln.rng_bits is Threefry-2x32 with 20 rounds (Salmon, Moraes, Dror and
// Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC 2011), the
// generator of JAX's default PRNG. The folder computes it on integers, the
// reference evaluator on integers, and the backends emit it as arith ops:
// all three instantiate the one algorithm below with their own arithmetic,
// so the rounds, rotations and key schedule cannot differ between them.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_THREEFRY_H
#define KILN_IR_THREEFRY_H

#include <cstdint>
#include <utility>

namespace mlir {
namespace kiln {

/// The key schedule's parity constant of Threefry's 32-bit variants.
inline constexpr uint32_t kThreefryParity = 0x1BD11BDA;

/// Threefry-2x32-20 of the counter (x0, x1) under the key (k0, k1).
/// `Arith` supplies the 32-bit wrapping operations on values of type V:
///   V add(V, V); V bitXor(V, V); V rotateLeft(V, unsigned);
///   V constant(uint32_t).
template <typename Arith, typename V>
std::pair<V, V> threefry2x32(Arith &arith, V k0, V k1, V x0, V x1) {
  static constexpr unsigned kRotations[2][4] = {{13, 15, 26, 6},
                                                {17, 29, 16, 24}};
  V keys[3] = {k0, k1,
               arith.bitXor(arith.bitXor(k0, k1),
                            arith.constant(kThreefryParity))};
  x0 = arith.add(x0, keys[0]);
  x1 = arith.add(x1, keys[1]);
  // Five groups of four rounds, each followed by a key injection.
  for (unsigned group = 0; group < 5; ++group) {
    for (unsigned rotation : kRotations[group % 2]) {
      x0 = arith.add(x0, x1);
      x1 = arith.bitXor(x0, arith.rotateLeft(x1, rotation));
    }
    x0 = arith.add(x0, keys[(group + 1) % 3]);
    x1 = arith.add(arith.add(x1, keys[(group + 2) % 3]),
                   arith.constant(group + 1));
  }
  return {x0, x1};
}

/// The arithmetic of threefry2x32 on host integers.
struct HostThreefryArith {
  uint32_t add(uint32_t a, uint32_t b) const { return a + b; }
  uint32_t bitXor(uint32_t a, uint32_t b) const { return a ^ b; }
  uint32_t rotateLeft(uint32_t a, unsigned n) const {
    return (a << n) | (a >> (32 - n));
  }
  uint32_t constant(uint32_t c) const { return c; }
};

/// Threefry-2x32-20 on host integers.
inline std::pair<uint32_t, uint32_t> threefry2x32(uint32_t k0, uint32_t k1,
                                                  uint32_t x0, uint32_t x1) {
  HostThreefryArith arith;
  return threefry2x32(arith, k0, k1, x0, x1);
}

} // namespace kiln
} // namespace mlir

#endif // KILN_IR_THREEFRY_H
