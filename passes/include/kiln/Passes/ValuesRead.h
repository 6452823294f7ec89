//===- ValuesRead.h - The values an op reads --------------------*- C++ -*-===//
//
// What an op depends on in its block: its operands and the values its
// regions use from above. Passes that cut a block apart (splitVjp,
// cutIntoStages) ask it of every op.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_VALUESREAD_H
#define KILN_PASSES_VALUESREAD_H

#include "mlir/IR/Operation.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace kiln {

/// The values `op` reads: its operands, then what its regions use from
/// above, each once.
inline llvm::SetVector<Value> valuesRead(Operation *op) {
  llvm::SetVector<Value> read(op->operand_begin(), op->operand_end());
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(op->getRegions(), captured);
  read.insert(captured.begin(), captured.end());
  return read;
}

} // namespace kiln
} // namespace mlir

#endif // KILN_PASSES_VALUESREAD_H
