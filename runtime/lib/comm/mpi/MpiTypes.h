//===- MpiTypes.h - kiln element types and reductions in MPI ----*- C++ -*-===//

#ifndef KILN_RUNTIME_LIB_COMM_MPI_MPITYPES_H
#define KILN_RUNTIME_LIB_COMM_MPI_MPITYPES_H

#include <mpi.h>

#include <cstdint>
#include <string>

namespace kiln {
namespace comm_mpi {

/// The MPI datatype that carries elements of a kiln dtype: the matching
/// fixed-width type, MPI_UINT16_T for f16 and bf16 (MPI has neither), one
/// unsigned byte for i1. MPI_DATATYPE_NULL for a code that is no dtype.
MPI_Datatype datatypeOf(int32_t dtype);

/// The operation of \p reduction (kiln_collective_reduction_t) on \p dtype,
/// with the reference evaluator's semantics. Floats get operations of their
/// own for what MPI's do not promise or have: the maximum and minimum
/// propagate NaN and order -0 below +0 (IEEE 754 maximum, minimum), and f16
/// and bf16 sum in float, rounding back to nearest even. i1 values are 0 or
/// 1: their sum and maximum are a logical or, their minimum a logical and.
/// Integer sums wrap. Returns false with a description in \p error for a
/// reduction it does not know.
bool operationOf(int32_t dtype, int32_t reduction, MPI_Op &op,
                 std::string &error);

/// Frees the operations made for floats; before MPI_Finalize.
void freeOperations();

} // namespace comm_mpi
} // namespace kiln

#endif // KILN_RUNTIME_LIB_COMM_MPI_MPITYPES_H
