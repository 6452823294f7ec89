#include "mlir/IR/Builders.h"
#include <stdio.h>
