//===- OwnerExchange.h - Lookups in a table split by rows -------*- C++ -*-===//
//
// A recommendation model's embedding table is split by rows over the ranks
// that also split the batch of ids. Each rank's ids must go to the ranks
// that own their rows and the rows must come back; in the backward pass the
// rows' gradients go to the owners. These functions build that exchange as
// TorchRec does, with all_to_all, in static shapes: each rank sorts its n
// ids into one bucket per owner of a fixed capacity C (a capacity factor
// times the mean n / N), so each exchange moves N C ids or rows per rank
// instead of the N n that gathering every rank's ids moves. A bucket that
// overflows on any rank of the group (ids that all fall in one rank's
// rows) sends the whole group, which agrees on it by an all-reduce of the
// largest bucket, down the path that gathers every rank's ids: the result
// is exact for every input, and fast for the ones that spread.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_PARALLEL_OWNEREXCHANGE_H
#define KILN_PASSES_PARALLEL_OWNEREXCHANGE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <cstdint>

namespace mlir {
namespace kiln {

struct OwnerExchange {
  /// The ranks along the axis and its replica groups (flattened rows).
  int64_t ranks = 1;
  llvm::ArrayRef<int64_t> groups;
  /// The table's rows (all ranks'); each rank owns rows / ranks of them.
  int64_t tableRows = 1;
  /// Ids per bucket.
  int64_t capacity = 1;
};

/// `ids` (i32 or i64, any shape) clamped to [0, rows - 1], as kiln.gather
/// clamps them.
Value clampToRows(OpBuilder &b, Location loc, Value ids, int64_t rows);

/// For clamped ids into a table split by rows, of which this rank owns
/// `ownedRows` from `offset` (rank-0, the ids' type) on: `local`, the ids
/// minus `offset`, and `mine`, whether this rank owns each.
struct OwnedIds {
  Value local, mine;
};
OwnedIds idsOwnedHere(OpBuilder &b, Location loc, Value clampedIds,
                      int64_t ownedRows, Value offset);

/// `rows` (the shape of `keep`, then a row's) where `keep` (i1) holds,
/// zeros elsewhere.
Value rowsWhere(OpBuilder &b, Location loc, Value keep, Value rows);

/// The bucket capacity for n ids per rank over `ranks` owners with the
/// capacity factor `factor`, ceil(factor n / ranks), or 0 where the
/// buckets would hold as many ids as gathering them all (or factor <= 0).
int64_t ownerBucketCapacity(double factor, int64_t n, int64_t ranks);

/// The rows of the table for this rank's `ids` ([n], i32 or i64, clamped
/// as kiln.gather clamps them), each rank holding its rows `localTable`
/// ([rows / ranks, ...]) from `offset` (rank-0, the ids' type) on: a
/// [n, ...] value.
Value lookUpByOwner(OpBuilder &b, Location loc, const OwnerExchange &exchange,
                    Value localTable, Value ids, Value offset);

/// This rank's rows ([rows / ranks, ...], of `localTableType`) of
/// scatter_add(0, every rank's ids, every rank's updates), for this rank's
/// `ids` ([n]) and `updates` ([n, ...]).
Value scatterToOwners(OpBuilder &b, Location loc, const OwnerExchange &exchange,
                      RankedTensorType localTableType, Value ids,
                      Value updates, Value offset);

} // namespace kiln
} // namespace mlir

#endif // KILN_PASSES_PARALLEL_OWNEREXCHANGE_H
