//===- ModelBuilder.h - Building IR from a checked .kfb model ---*- C++ -*-===//
//
// Creates the module a checked model describes. The checks have established
// everything construction relies on, so building cannot fail; whether the
// result is valid IR is for the MLIR verifier to say afterwards.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_KFB_MODELBUILDER_H
#define KILN_LIB_KFB_MODELBUILDER_H

#include "ModelChecks.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace kiln {
namespace modelfile {

mlir::OwningOpRef<mlir::ModuleOp> buildModule(const CheckedModel &model,
                                              mlir::MLIRContext *context);

} // namespace modelfile
} // namespace kiln

#endif // KILN_LIB_KFB_MODELBUILDER_H
