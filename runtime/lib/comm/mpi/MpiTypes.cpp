//===- MpiTypes.cpp - kiln element types and reductions in MPI ------------===//

#include "MpiTypes.h"

#include "kiln/CollectiveAbi.h"
#include "kiln/ElementType.h"
#include "kiln/HalfFloat.h"

#include <cmath>

namespace kiln {
namespace comm_mpi {
namespace {

enum class Half { F16, BF16 };

float widen(Half type, uint16_t bits) {
  return type == Half::F16 ? halfToFloat(bits) : bfloat16ToFloat(bits);
}

uint16_t narrow(Half type, float value) {
  return type == Half::F16 ? floatToHalf(value) : floatToBfloat16(value);
}

/// inout[i] = in[i] (reduction) inout[i], in float, for 16-bit floats.
/// Maxima and minima keep the chosen operand's bits; a NaN wins, as it
/// does in the compiled code's own reductions.
template <Half Type, int Reduction>
void reduceHalf(void *in, void *inout, int *length, MPI_Datatype *) {
  const auto *a = static_cast<const uint16_t *>(in);
  auto *b = static_cast<uint16_t *>(inout);
  for (int i = 0; i < *length; ++i) {
    float x = widen(Type, a[i]), y = widen(Type, b[i]);
    switch (Reduction) {
    case KILN_REDUCTION_SUM:
      b[i] = narrow(Type, x + y);
      break;
    case KILN_REDUCTION_MAX:
      if (std::isnan(x) || x > y)
        b[i] = a[i];
      break;
    case KILN_REDUCTION_MIN:
      if (std::isnan(x) || x < y)
        b[i] = a[i];
      break;
    }
  }
}

/// The operations of reduceHalf, made at first use: [f16, bf16][reduction].
MPI_Op halfOperations[2][3];
bool halfOperationsMade = false;

bool makeHalfOperations(std::string &error) {
  if (halfOperationsMade)
    return true;
  MPI_User_function *functions[2][3] = {
      {reduceHalf<Half::F16, KILN_REDUCTION_SUM>,
       reduceHalf<Half::F16, KILN_REDUCTION_MAX>,
       reduceHalf<Half::F16, KILN_REDUCTION_MIN>},
      {reduceHalf<Half::BF16, KILN_REDUCTION_SUM>,
       reduceHalf<Half::BF16, KILN_REDUCTION_MAX>,
       reduceHalf<Half::BF16, KILN_REDUCTION_MIN>}};
  for (int type = 0; type < 2; ++type)
    for (int reduction = 0; reduction < 3; ++reduction)
      if (MPI_Op_create(functions[type][reduction], /*commute=*/1,
                        &halfOperations[type][reduction]) != MPI_SUCCESS) {
        error = "MPI_Op_create failed for a 16-bit float reduction";
        return false;
      }
  halfOperationsMade = true;
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
  if (type == ElementType::F16 || type == ElementType::BF16) {
    if (!makeHalfOperations(error))
      return false;
    op = halfOperations[type == ElementType::F16 ? 0 : 1][reduction];
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
  if (!halfOperationsMade)
    return;
  for (auto &row : halfOperations)
    for (MPI_Op &op : row)
      MPI_Op_free(&op);
  halfOperationsMade = false;
}

} // namespace comm_mpi
} // namespace kiln
