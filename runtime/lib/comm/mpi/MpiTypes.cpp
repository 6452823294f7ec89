//===- MpiTypes.cpp - kiln element types and reductions in MPI ------------===//

#include "MpiTypes.h"

#include "comm/Reductions.h"

#include "kiln/CollectiveAbi.h"
#include "kiln/ElementType.h"

namespace kiln {
namespace comm_mpi {
namespace {

using comm_reductions::BF16;
using comm_reductions::F16;
using comm_reductions::F32;
using comm_reductions::F64;

/// inout[i] = in[i] (reduction) inout[i] (comm/Reductions.h).
template <typename Format, int Reduction>
void reduceFloats(void *in, void *inout, int *length, MPI_Datatype *) {
  comm_reductions::combineFloats<Format, Reduction>(inout, in, inout,
                                                    size_t(*length));
}

/// The operations made at first use, by float format (f16, bf16, f32,
/// f64) and reduction; MPI_OP_NULL where MPI's own serves (f32 and f64
/// sums).
MPI_Op floatOperations[4][3];
bool floatOperationsMade = false;

int formatIndex(ElementType type) {
  switch (type) {
  case ElementType::F16:
    return 0;
  case ElementType::BF16:
    return 1;
  case ElementType::F32:
    return 2;
  case ElementType::F64:
    return 3;
  default:
    return -1;
  }
}

bool makeFloatOperations(std::string &error) {
  if (floatOperationsMade)
    return true;
  MPI_User_function *functions[4][3] = {
      {reduceFloats<F16, KILN_REDUCTION_SUM>,
       reduceFloats<F16, KILN_REDUCTION_MAX>,
       reduceFloats<F16, KILN_REDUCTION_MIN>},
      {reduceFloats<BF16, KILN_REDUCTION_SUM>,
       reduceFloats<BF16, KILN_REDUCTION_MAX>,
       reduceFloats<BF16, KILN_REDUCTION_MIN>},
      {nullptr, reduceFloats<F32, KILN_REDUCTION_MAX>,
       reduceFloats<F32, KILN_REDUCTION_MIN>},
      {nullptr, reduceFloats<F64, KILN_REDUCTION_MAX>,
       reduceFloats<F64, KILN_REDUCTION_MIN>}};
  for (int format = 0; format < 4; ++format) {
    for (int reduction = 0; reduction < 3; ++reduction) {
      MPI_Op &op = floatOperations[format][reduction];
      op = MPI_OP_NULL;
      if (functions[format][reduction] &&
          MPI_Op_create(functions[format][reduction], /*commute=*/1, &op) !=
              MPI_SUCCESS) {
        error = "MPI_Op_create failed for a float reduction";
        return false;
      }
    }
  }
  floatOperationsMade = true;
  return true;
}

} // namespace

MPI_Datatype datatypeOf(int32_t dtype) {
  if (dtype < 0 || unsigned(dtype) >= kNumElementTypes)
    return MPI_DATATYPE_NULL;
  switch (ElementType(dtype)) {
  case ElementType::F32:
    return MPI_FLOAT;
  case ElementType::F64:
    return MPI_DOUBLE;
  case ElementType::I1:
  case ElementType::UI8:
    return MPI_UINT8_T;
  case ElementType::I8:
    return MPI_INT8_T;
  case ElementType::I16:
    return MPI_INT16_T;
  case ElementType::I32:
    return MPI_INT32_T;
  case ElementType::I64:
    return MPI_INT64_T;
  case ElementType::F16:
  case ElementType::BF16:
  case ElementType::UI16:
    return MPI_UINT16_T;
  case ElementType::UI32:
    return MPI_UINT32_T;
  case ElementType::UI64:
    return MPI_UINT64_T;
  }
  return MPI_DATATYPE_NULL;
}

bool operationOf(int32_t dtype, int32_t reduction, MPI_Op &op,
                 std::string &error) {
  if (reduction < KILN_REDUCTION_SUM || reduction > KILN_REDUCTION_MIN) {
    error = "unknown reduction " + std::to_string(reduction);
    return false;
  }
  ElementType type = ElementType(dtype);
  if (int format = formatIndex(type); format >= 0) {
    if (!makeFloatOperations(error))
      return false;
    op = floatOperations[format][reduction];
    if (op != MPI_OP_NULL)
      return true;
  }
  if (type == ElementType::I1) {
    op = reduction == KILN_REDUCTION_MIN ? MPI_LAND : MPI_LOR;
    return true;
  }
  op = reduction == KILN_REDUCTION_SUM   ? MPI_SUM
       : reduction == KILN_REDUCTION_MAX ? MPI_MAX
                                         : MPI_MIN;
  return true;
}

void freeOperations() {
  if (!floatOperationsMade)
    return;
  for (auto &row : floatOperations)
    for (MPI_Op &op : row)
      if (op != MPI_OP_NULL)
        MPI_Op_free(&op);
  floatOperationsMade = false;
}

} // namespace comm_mpi
} // namespace kiln
