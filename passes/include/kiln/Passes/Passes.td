//===- Passes.td - Transformations on the kiln dialect -----*- tablegen -*-===//
//
// Passes that rewrite kiln IR into kiln IR. The backend passes (lowering,
// CPU pipeline) live in backends/include/kiln/Backends/Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_PASSES_TD
#define KILN_PASSES_PASSES_TD

include "mlir/Pass/PassBase.td"

def Grad : Pass<"kiln-grad", "mlir::ModuleOp"> {
  let summary = "Derive the reverse-mode gradient (VJP) of a kiln function";
  let description = [{
    For `@f(x...) -> (y...)` adds `@f_grad(x..., dy...) -> (y..., dx...)`
    next to it: the forward computation followed by the vector-Jacobian
    product, as ordinary kiln IR. There is one `dy` argument per float
    result of `@f` and one `dx` result per argument listed in `wrt` (all
    float arguments when `wrt` is empty). Integer and i1 results take no
    cotangent.

    With `value-and-grad`, `@f` must have one rank-0 float result and the
    pass adds `@f_value_and_grad(x...) -> (y, dx...)`, seeding the backward
    pass with 1.0.

    ```
    kiln-opt --kiln-grad="function=loss wrt=0,1" model.mlir
    kiln-opt --kiln-grad="function=loss value-and-grad=true" model.mlir
    ```

    Every kiln op has a rule (mlir::kiln::hasVjpRule) except the stack ops
    that derived gradients of `kiln.while` use. `kiln.cond` is
    differentiated through the branch that ran; `kiln.for` by a loop over
    the iterations in reverse that reads what the forward loop stored per
    iteration; `kiln.while` likewise, its forward loop pushing what the
    backward loop reads onto stacks that grow at run time. An op without a
    rule on a differentiated path (such as a stack op, when a derived
    gradient of a while is differentiated again), a `wrt` argument that is
    not a float tensor, or an unknown function is an error at that op or
    function. See passes/autodiff/README.md.
  }];
  let options = [
    Option<"functionName", "function", "std::string", /*default=*/"\"\"",
           "Name of the function to differentiate">,
    ListOption<"wrt", "wrt", "unsigned",
               "Indices of the arguments to differentiate with respect to "
               "(default: every float argument)">,
    Option<"valueAndGrad", "value-and-grad", "bool", /*default=*/"false",
           "Derive f_value_and_grad(x...) -> (y, dx...) for a function with "
           "one rank-0 float result, seeding the cotangent with 1.0">,
    Option<"gradName", "name", "std::string", /*default=*/"\"\"",
           "Name of the derived function (default: <function>_grad or "
           "<function>_value_and_grad)">,
    Option<"checkpointEvery", "checkpoint-every", "unsigned", /*default=*/"0",
           "Store the carried values of kiln.for/kiln.while loops every N "
           "iterations and recompute the segments in the backward pass "
           "instead of storing every iteration (0: store every iteration)">,
  ];
  let dependentDialects = ["mlir::kiln::KilnDialect",
                           "mlir::func::FuncDialect"];
}

#endif // KILN_PASSES_PASSES_TD
