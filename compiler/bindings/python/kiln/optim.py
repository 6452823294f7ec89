"""kiln.optim: SGD, Adam, AdamW and Adagrad as functions traced into the
program.

    opt = kiln.optim.adam(1e-3)
    state = opt.init(params)                 # zeros, and a step count

    @kiln.jit
    def train_step(params, state, x, y):
        loss, grads = kiln.value_and_grad(loss_fn)(params, x, y)
        params, state = opt.update(params, grads, state)
        return loss, params, state

`update` records the optimizer step in the function being traced, so the
whole training step is one compiled function, and the optimizer's state
goes in and out of it as arrays: a dict with "count" (an int64 0-d array,
the number of updates so far; an array, so the compiled step is not
recompiled every step) and one pytree shaped like the parameters per slot
("momentum_buffer" for SGD with momentum; "exp_avg", "exp_avg_sq" and, with
amsgrad, "max_exp_avg_sq" for Adam; "sum" for Adagrad). Outside a trace `update` compiles and
runs itself (kiln.jit) on numpy arrays.

The formulas are PyTorch's torch.optim.SGD, Adam, AdamW and Adagrad, defined
once in
kiln's C++ tracer (kiln/Optim.h); this module only maps pytrees onto its
flat lists. Updates are elementwise in (param, grad, state) plus rank-0
values of the step. See docs/python.md.
"""

import numpy as np

from . import _core, _kiln, _tree
from . import numpy as knp
from ._core import Tensor, fail
from ._eager import eager, every_argument

__all__ = ["Optimizer", "LossScaler", "sgd", "adam", "adamw", "adagrad"]


class Optimizer:
    """An optimizer: `init(params)` makes its state, `update(params, grads,
    state, lr=None)` returns `(new_params, new_state)`."""

    def __init__(self, impl, description):
        self._impl = impl
        self._description = description
        self._compiled_update = eager(self._traced_update,
                                      name="optim_update",
                                      inputs=every_argument)
        # Checks the hyper-parameters now rather than at the first update.
        impl.state_specs([])

    def __repr__(self):
        return self._description

    @property
    def slot_names(self):
        """Names of the per-parameter entries of the state."""
        return tuple(self._impl.slot_names)

    def init(self, params):
        """The initial state for `params` (a pytree of float32/float64
        arrays): all zeros, numpy arrays outside a trace."""
        leaves, treedef = _tree.flatten(params)
        specs = [_leaf_spec(leaf) for leaf in leaves]
        tracing = _kiln.is_tracing()
        zeros = []
        for _, shape, code in self._impl.state_specs(specs):
            dtype = _core._DTYPE_OF_CODE[code]
            zeros.append(knp.zeros(tuple(shape), dtype) if tracing
                         else np.zeros(tuple(shape), dtype))
        return self._state_tree(zeros, treedef)

    def update(self, params, grads, state, lr=None):
        """One step: `(new_params, new_state)`. `grads` has the structure
        of `params`; `lr`, when given (a number or a 0-d array, traced or
        not), replaces the optimizer's learning rate for this step, so that
        a schedule does not recompile the step."""
        if (not _kiln.is_tracing() and lr is not None
                and not isinstance(lr, (np.ndarray, np.generic))):
            # Outside a trace, an input of the compiled step as exact as
            # the constant lr of a traced one.
            lr = np.float64(lr)
        return self._compiled_update(params, grads, state, lr)

    def _traced_update(self, params, grads, state, lr):
        param_leaves, grad_leaves, treedef, lr = _step_arguments(params,
                                                                 grads, lr)
        new_params, new_state = self._impl.step(
            param_leaves, grad_leaves, self._state_leaves(state, treedef), lr)
        return treedef.unflatten(new_params), self._state_tree(new_state,
                                                               treedef)

    def _state_tree(self, flat, treedef):
        """The state dict from the C++ layout: the count, then each slot
        for every parameter."""
        n = treedef.num_leaves
        tree = {"count": flat[0]}
        for k, name in enumerate(self._impl.slot_names):
            tree[name] = treedef.unflatten(flat[1 + k * n:1 + (k + 1) * n])
        return tree

    def _state_leaves(self, state, treedef):
        """The C++ layout of a state dict, checked against the parameters'
        structure."""
        names = ["count"] + list(self._impl.slot_names)
        if not isinstance(state, dict) or sorted(state) != sorted(names):
            got = sorted(state) if isinstance(state, dict) else \
                type(state).__name__
            fail(f"kiln.optim: {self!r} expects a state with the entries "
                 f"{names} (from init), got {got}", ValueError)
        flat = [state["count"]]
        for name in names[1:]:
            leaves, slot_def = _tree.flatten(state[name])
            if slot_def != treedef:
                fail(f"kiln.optim: the state's {name!r} {slot_def!r} and the "
                     f"parameters {treedef!r} differ in structure",
                     ValueError)
            flat.extend(leaves)
        return flat


def _step_arguments(params, grads, lr):
    """The flat parameters and gradients of a traced update, the
    parameters' structure (which the gradients must share) and `lr` with
    a Python number made an f64 0-d array (as exact as the constant lr)."""
    param_leaves, treedef = _tree.flatten(params)
    grad_leaves, grad_def = _tree.flatten(grads)
    if grad_def != treedef:
        fail(f"kiln.optim: the gradients {grad_def!r} and the parameters "
             f"{treedef!r} differ in structure", ValueError)
    if isinstance(lr, (int, float)) and not isinstance(lr, bool):
        lr = np.float64(lr)
    return param_leaves, grad_leaves, treedef, lr


def _leaf_spec(leaf):
    """(shape, dtype code) of a parameter: traced, a numpy array, or a
    Python float (float32, as kiln traces it)."""
    if isinstance(leaf, Tensor):
        return tuple(leaf.shape), leaf.dtype_code
    if isinstance(leaf, float):
        return (), _core.dtype_code(np.float32)
    array = np.asarray(leaf)
    return tuple(array.shape), _core.dtype_code(array.dtype)


def sgd(lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False,
        maximize=False):
    """torch.optim.SGD: p -= lr * d with d = g + weight_decay * p, through
    a momentum buffer b = momentum * b + (1 - dampening) * d (b = d on the
    first step) when momentum != 0, Nesterov's d + momentum * b if
    `nesterov`."""
    impl = _kiln.Sgd(float(lr), float(momentum), float(dampening),
                     float(weight_decay), bool(nesterov), bool(maximize))
    return Optimizer(impl, f"kiln.optim.sgd(lr={lr}, momentum={momentum}, "
                           f"dampening={dampening}, weight_decay="
                           f"{weight_decay}, nesterov={nesterov})")


def _adam(name, lr, betas, eps, weight_decay, amsgrad, maximize, decoupled):
    beta1, beta2 = betas
    impl = _kiln.Adam(float(lr), float(beta1), float(beta2), float(eps),
                      float(weight_decay), bool(amsgrad), decoupled,
                      bool(maximize))
    return Optimizer(impl, f"kiln.optim.{name}(lr={lr}, betas=({beta1}, "
                           f"{beta2}), eps={eps}, weight_decay="
                           f"{weight_decay}, amsgrad={amsgrad})")


def adam(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
         amsgrad=False, maximize=False):
    """torch.optim.Adam: bias-corrected moment estimates m and v of g
    (g + weight_decay * p with L2 weight decay), p -= lr / (1 - beta1^t) *
    m / (sqrt(v) / sqrt(1 - beta2^t) + eps); AMSGrad uses the running
    maximum of v."""
    return _adam("adam", lr, betas, eps, weight_decay, amsgrad, maximize,
                 decoupled=False)


def adamw(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
          amsgrad=False, maximize=False):
    """torch.optim.AdamW: Adam with decoupled weight decay, p *= 1 - lr *
    weight_decay before the Adam step."""
    return _adam("adamw", lr, betas, eps, weight_decay, amsgrad, maximize,
                 decoupled=True)


def adagrad(lr=1e-2, lr_decay=0.0, weight_decay=0.0,
            initial_accumulator_value=0.0, eps=1e-10, maximize=False):
    """torch.optim.Adagrad: the running sum s of g * g (g + weight_decay *
    p with weight decay; s starts at initial_accumulator_value), p -= lr /
    (1 + (t - 1) * lr_decay) * g / (sqrt(s) + eps). The state's slot "sum"
    is torch's state_sum."""
    impl = _kiln.Adagrad(float(lr), float(lr_decay), float(weight_decay),
                         float(initial_accumulator_value), float(eps),
                         bool(maximize))
    return Optimizer(impl, f"kiln.optim.adagrad(lr={lr}, lr_decay="
                           f"{lr_decay}, weight_decay={weight_decay}, "
                           f"initial_accumulator_value="
                           f"{initial_accumulator_value}, eps={eps})")


class LossScaler:
    """Dynamic loss scaling for float16 training (kiln.jit(...,
    autocast="f16")), torch.amp.GradScaler's rules traced into the step:

        scaler = kiln.optim.LossScaler()
        sstate = scaler.init()         # {"scale": 65536.0, "growth_tracker": 0}

        def train_step(params, state, sstate, x, y):
            scaled, grads = kiln.value_and_grad(
                lambda p: scaler.scale(loss_fn(p, x, y), sstate))(params)
            loss = scaled / sstate["scale"]
            params, state, sstate, skipped = scaler.update(
                opt, params, grads, state, sstate)
            return loss, params, state, sstate, skipped

        step = kiln.jit(train_step, autocast="f16")

    `update` unscales the gradients and, when every element is finite,
    applies `optimizer`'s update (and multiplies the scale by
    growth_factor after growth_interval clean steps); otherwise it keeps
    the parameters and the optimizer state and multiplies the scale by
    backoff_factor. `skipped` is a 0-d bool array. Defined once in C++
    (kiln::optim::LossScaler, docs/tracer.md)."""

    def __init__(self, init_scale=65536.0, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000):
        self._impl = _kiln.LossScaler(float(init_scale), float(growth_factor),
                                      float(backoff_factor),
                                      int(growth_interval))
        self._impl.check()

    def init(self):
        """The initial scaler state: the scale (float32) and the count of
        clean steps since the scale last changed (int64), 0-d arrays."""
        scale = np.array(self._impl.init_scale, np.float32)
        tracker = np.array(0, np.int64)
        if _kiln.is_tracing():
            return {"scale": knp.asarray(scale),
                    "growth_tracker": knp.asarray(tracker)}
        return {"scale": scale, "growth_tracker": tracker}

    def scale(self, loss, state):
        """`loss` times the current scale (inside a trace)."""
        return self._impl.scale(loss, self._leaves(state))

    def update(self, optimizer, params, grads, opt_state, state, lr=None):
        """`(params, opt_state, state, skipped)` after one step with the
        gradients of the scaled loss (inside a trace)."""
        if not _kiln.is_tracing():
            fail("kiln.optim.LossScaler.update records the step in a traced "
                 "function; call it inside kiln.jit", TypeError)
        if not isinstance(optimizer, Optimizer):
            fail(f"kiln.optim.LossScaler.update needs a kiln.optim "
                 f"optimizer, not {type(optimizer).__name__}", TypeError)
        param_leaves, grad_leaves, treedef, lr = _step_arguments(params,
                                                                 grads, lr)
        new_params, new_opt, new_state, skipped = self._impl.step(
            optimizer._impl, param_leaves, grad_leaves,
            optimizer._state_leaves(opt_state, treedef), self._leaves(state),
            lr)
        return (treedef.unflatten(new_params),
                optimizer._state_tree(new_opt, treedef),
                {"scale": new_state[0], "growth_tracker": new_state[1]},
                skipped)

    @staticmethod
    def _leaves(state):
        if not isinstance(state, dict) or \
                sorted(state) != ["growth_tracker", "scale"]:
            fail("kiln.optim.LossScaler: the scaler state is a dict with "
                 "'scale' and 'growth_tracker' (from init)", ValueError)
        return [state["scale"], state["growth_tracker"]]
