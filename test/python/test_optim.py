"""kiln.optim: SGD, Adam and AdamW traced into jitted steps.

Each optimizer runs 20 steps inside kiln.jit, its state going in and out
of the compiled step, and is compared with
  - a numpy implementation of the textbook formulas written here (runs
    everywhere), and
  - torch.optim itself on the same parameters and gradients (skipped where
    torch is not importable; ctest runs this file a second time under an
    interpreter with torch, see test/python/CMakeLists.txt).
"""

import numpy as np
import pytest

import kiln
import kiln.numpy as knp

STEPS = 20

# (name, kiln factory, keyword arguments in torch's spelling).
CONFIGS = [
    ("sgd", "sgd", dict(lr=0.1)),
    ("sgd_momentum_wd", "sgd", dict(lr=0.05, momentum=0.9,
                                    weight_decay=0.01)),
    ("sgd_dampening", "sgd", dict(lr=0.05, momentum=0.8, dampening=0.3)),
    ("sgd_nesterov_maximize", "sgd", dict(lr=0.02, momentum=0.9,
                                          weight_decay=0.1, nesterov=True,
                                          maximize=True)),
    ("adam", "adam", dict(lr=0.01)),
    ("adam_l2_betas", "adam", dict(lr=0.003, betas=(0.7, 0.95), eps=1e-3,
                                   weight_decay=0.05)),
    ("adam_small_beta1", "adam", dict(lr=0.01, betas=(0.3, 0.9))),
    ("adam_amsgrad", "adam", dict(lr=0.01, amsgrad=True)),
    ("adamw", "adamw", dict(lr=0.01)),
    ("adamw_amsgrad_maximize", "adamw", dict(lr=0.01, betas=(0.8, 0.99),
                                             weight_decay=0.1, amsgrad=True,
                                             maximize=True)),
    ("adagrad", "adagrad", dict(lr=0.05)),
    ("adagrad_decay_wd_initial", "adagrad",
     dict(lr=0.1, lr_decay=0.01, weight_decay=0.02,
          initial_accumulator_value=0.5, eps=1e-6)),
    ("adagrad_maximize", "adagrad", dict(lr=0.01, maximize=True)),
]
CONFIG_IDS = [c[0] for c in CONFIGS]


def make_params(rng, dtype):
    """A pytree of parameters: a dict holding a matrix and a list."""
    return {"w": rng.standard_normal((3, 4)).astype(dtype),
            "layers": [rng.standard_normal(5).astype(dtype),
                       np.asarray(rng.standard_normal(), dtype)]}


def make_grads(rng, params, steps):
    """`steps` gradient pytrees shaped like `params`, some elements tiny."""
    def one(p):
        g = rng.standard_normal(p.shape) * rng.choice([1e-4, 0.1, 1.0],
                                                      size=p.shape)
        return g.astype(p.dtype)
    return [kiln.tree_map(one, params) for _ in range(steps)]


def make_step(opt):
    @kiln.jit
    def step(params, grads, state):
        return opt.update(params, grads, state)
    return step


def run_kiln(factory, kwargs, params, grads):
    """The parameters and state after each step, from a jitted update."""
    opt = getattr(kiln.optim, factory)(**kwargs)
    step = make_step(opt)
    state = opt.init(params)
    history = []
    for g in grads:
        params, state = step(params, g, state)
        history.append((params, state))
    assert step.cache_size == 1      # the count is an input: one compile
    return history


# --- numpy reference (the textbook formulas, in float64) ---------------------

def reference_run(factory, kwargs, params, grads):
    """The same run with numpy in float64, element by element of the
    flattened parameters."""
    leaves, treedef = kiln.tree_flatten(params)
    p = [np.asarray(x, np.float64).copy() for x in leaves]
    lr = kwargs["lr"]
    wd = kwargs.get("weight_decay", 1e-2 if factory == "adamw" else 0.0)
    maximize = kwargs.get("maximize", False)
    slots = {}
    history = []
    for t, gtree in enumerate(grads, start=1):
        g_leaves = [np.asarray(x, np.float64) for x in
                    kiln.tree_leaves(gtree)]
        if maximize:
            g_leaves = [-g for g in g_leaves]
        if factory == "sgd":
            mu = kwargs.get("momentum", 0.0)
            tau = kwargs.get("dampening", 0.0)
            for i, g in enumerate(g_leaves):
                d = g + wd * p[i]
                if mu != 0:
                    b = slots.setdefault("momentum_buffer", [None] * len(p))
                    b[i] = d if t == 1 else mu * b[i] + (1 - tau) * d
                    d = d + mu * b[i] if kwargs.get("nesterov") else b[i]
                p[i] = p[i] - lr * d
        elif factory == "adagrad":
            init = kwargs.get("initial_accumulator_value", 0.0)
            eps = kwargs.get("eps", 1e-10)
            s = slots.setdefault("sum", [np.full_like(x, init) for x in p])
            clr = lr / (1 + (t - 1) * kwargs.get("lr_decay", 0.0))
            for i, g in enumerate(g_leaves):
                g = g + wd * p[i]
                s[i] = s[i] + g * g
                p[i] = p[i] - clr * g / (np.sqrt(s[i]) + eps)
        else:
            beta1, beta2 = kwargs.get("betas", (0.9, 0.999))
            eps = kwargs.get("eps", 1e-8)
            amsgrad = kwargs.get("amsgrad", False)
            zeros = [np.zeros_like(x) for x in p]
            m = slots.setdefault("exp_avg", list(zeros))
            v = slots.setdefault("exp_avg_sq", list(zeros))
            if amsgrad:
                vmax = slots.setdefault("max_exp_avg_sq", list(zeros))
            for i, g in enumerate(g_leaves):
                if factory == "adamw":
                    p[i] = p[i] * (1 - lr * wd)
                else:
                    g = g + wd * p[i]
                m[i] = beta1 * m[i] + (1 - beta1) * g
                v[i] = beta2 * v[i] + (1 - beta2) * g * g
                v_used = v[i]
                if amsgrad:
                    vmax[i] = np.maximum(vmax[i], v[i])
                    v_used = vmax[i]
                m_hat = m[i] / (1 - beta1 ** t)
                v_hat = v_used / (1 - beta2 ** t)
                p[i] = p[i] - lr * m_hat / (np.sqrt(v_hat) + eps)
        history.append(([x.copy() for x in p],
                        {k: [x.copy() for x in v] for k, v in slots.items()},
                        t))
    return treedef, history


def max_relative_difference(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.max(np.abs(got - want) / np.maximum(1.0, np.abs(want)),
                        initial=0.0))


@pytest.mark.parametrize("dtype,tolerance", [(np.float64, 1e-12),
                                             (np.float32, 2e-5)])
@pytest.mark.parametrize("name,factory,kwargs", CONFIGS, ids=CONFIG_IDS)
def test_against_numpy_reference(rng, name, factory, kwargs, dtype,
                                 tolerance):
    params = make_params(rng, dtype)
    grads = make_grads(rng, params, STEPS)
    history = run_kiln(factory, kwargs, params, grads)
    treedef, reference = reference_run(factory, kwargs, params, grads)
    worst = 0.0
    for (got_params, got_state), (want_params, want_slots, t) in zip(
            history, reference):
        assert got_state["count"].dtype == np.int64
        assert int(got_state["count"]) == t
        for got, want in zip(kiln.tree_leaves(got_params), want_params):
            assert got.dtype == dtype
            worst = max(worst, max_relative_difference(got, want))
        assert sorted(got_state) == sorted(["count"] + list(want_slots))
        for slot, want_leaves in want_slots.items():
            got_leaves, got_def = kiln.tree_flatten(got_state[slot])
            assert got_def == treedef
            for got, want in zip(got_leaves, want_leaves):
                worst = max(worst, max_relative_difference(got, want))
    assert worst <= tolerance, f"{name}: {worst:.3g} > {tolerance:.3g}"


def test_reference_check_rejects_a_wrong_update(rng):
    """The comparison above notices a learning rate 0.1% off."""
    params = make_params(rng, np.float64)
    grads = make_grads(rng, params, 3)
    history = run_kiln("adam", dict(lr=0.01 * 1.001), params, grads)
    _, reference = reference_run("adam", dict(lr=0.01), params, grads)
    got = kiln.tree_leaves(history[-1][0])
    assert max(max_relative_difference(g, w) for g, w in
               zip(got, reference[-1][0])) > 1e-6


# --- API ---------------------------------------------------------------------

def test_state_layout_and_init():
    params = {"a": np.ones((2, 3), np.float32), "b": [np.zeros(4)]}
    opt = kiln.optim.adam(amsgrad=True)
    assert opt.slot_names == ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")
    state = opt.init(params)
    assert sorted(state) == ["count", "exp_avg", "exp_avg_sq",
                             "max_exp_avg_sq"]
    assert state["count"].shape == () and state["count"].dtype == np.int64
    assert int(state["count"]) == 0
    for slot in opt.slot_names:
        assert state[slot]["a"].shape == (2, 3)
        assert state[slot]["a"].dtype == np.float32
        assert state[slot]["b"][0].dtype == np.float64
        assert not state[slot]["a"].any()
    assert kiln.optim.sgd(0.1).init(params) == {"count": 0}
    assert kiln.optim.sgd(0.1, momentum=0.9).slot_names == \
        ("momentum_buffer",)


def test_init_and_update_inside_one_jit(rng):
    """init traced too: a whole short run in one compiled function."""
    opt = kiln.optim.sgd(0.1, momentum=0.9)
    p0 = rng.standard_normal(4).astype(np.float32)
    g = rng.standard_normal((3, 4)).astype(np.float32)

    @kiln.jit
    def run(p, g):
        state = opt.init(p)
        for k in range(3):
            p, state = opt.update(p, g[k], state)
        return p, state

    p, state = run(p0, g)
    b = g[0].astype(np.float64)
    want = p0 - 0.1 * b
    for k in (1, 2):
        b = 0.9 * b + g[k]
        want = want - 0.1 * b
    np.testing.assert_allclose(p, want, rtol=1e-5, atol=1e-6)
    assert int(state["count"]) == 3


def test_eager_update_outside_jit(rng):
    """Outside a trace, update compiles itself and returns numpy arrays."""
    opt = kiln.optim.adamw(lr=0.01)
    params = {"w": rng.standard_normal(5)}
    grads = {"w": rng.standard_normal(5)}
    state = opt.init(params)
    new_params, state = opt.update(params, grads, state)
    assert isinstance(new_params["w"], np.ndarray)
    assert int(state["count"]) == 1
    # First Adam step: m_hat = g, v_hat = g^2, so the step is lr*g/(|g|+eps).
    g, w = grads["w"], params["w"]
    want = w * (1 - 0.01 * 0.01) - 0.01 * g / (np.abs(g) + 1e-8)
    np.testing.assert_allclose(new_params["w"], want, rtol=1e-12)
    # A learning rate of 0 for one step (a Python float): no decay, no step.
    same, state = opt.update(new_params, grads, state, lr=0.0)
    np.testing.assert_array_equal(same["w"], new_params["w"])
    assert int(state["count"]) == 2


def test_learning_rate_schedule_is_an_input(rng):
    """lr passed per call: one compiled step for the whole schedule."""
    opt = kiln.optim.sgd(lr=1.0, momentum=0.5)

    @kiln.jit
    def step(p, g, state, lr):
        return opt.update(p, g, state, lr=lr)

    p = rng.standard_normal(3)
    state = opt.init(p)
    want, b = p.copy(), np.zeros(3)
    for k, lr in enumerate([0.1, 0.05, 0.025, 0.0125]):
        g = rng.standard_normal(3)
        p, state = step(p, g, state, np.float64(lr))
        b = g if k == 0 else 0.5 * b + g
        want = want - lr * b
    np.testing.assert_allclose(p, want, rtol=1e-13)
    assert step.cache_size == 1


def test_update_records_elementwise_ops_only():
    """The update is elementwise: no reductions or matmuls in its IR."""
    opt = kiln.optim.adamw(amsgrad=True)

    def step(p, g, state):
        return opt.update(p, g, state)

    p = np.zeros((2, 3), np.float32)
    text = kiln.jit(step).lower(p, p, opt.init(p)).as_text()
    assert "kiln.pow" in text and "kiln.sqrt" in text
    for op in ("reduce", "matmul", "transpose", "gather", "slice"):
        assert f"kiln.{op}" not in text


def test_errors(rng):
    with pytest.raises(kiln.TraceError, match="Nesterov momentum requires"):
        kiln.optim.sgd(0.1, nesterov=True)
    with pytest.raises(kiln.TraceError, match=r"beta1 and beta2 must be in"):
        kiln.optim.adam(betas=(0.9, 1.0))
    with pytest.raises(kiln.TraceError, match="lr must be a finite number"):
        kiln.optim.adamw(lr=-1.0)

    opt = kiln.optim.sgd(0.1, momentum=0.9)
    params = {"a": np.zeros(3), "b": np.zeros(2)}
    state = opt.init(params)
    with pytest.raises(ValueError, match="differ in structure"):
        opt.update(params, {"a": np.zeros(3)}, state)
    with pytest.raises(ValueError, match="expects a state with the entries"):
        opt.update(params, params, {"count": state["count"]})
    with pytest.raises(kiln.TraceError,
                       match="gradient 0 is f64\\[4\\], its parameter "
                             "f64\\[3\\]"):
        opt.update(params, {"a": np.zeros(4), "b": np.zeros(2)}, state)


# --- torch.optim -------------------------------------------------------------

def torch_run(factory, kwargs, params, grads):
    """torch.optim on the same parameters and gradients (the single-tensor
    implementation, foreach=False, which kiln follows formula by formula)."""
    import torch
    leaves, _ = kiln.tree_flatten(params)
    tensors = [torch.tensor(np.array(x), requires_grad=True) for x in leaves]
    cls = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam,
           "adamw": torch.optim.AdamW, "adagrad": torch.optim.Adagrad}[factory]
    opt = cls(tensors, foreach=False, **kwargs)
    history = []
    for gtree in grads:
        for t, g in zip(tensors, kiln.tree_leaves(gtree)):
            t.grad = torch.tensor(np.array(g))
        opt.step()
        state = {}
        for t in tensors:
            for key, value in opt.state[t].items():
                if key != "step":
                    state.setdefault(key, []).append(
                        value.detach().numpy().copy())
        steps = {float(opt.state[t]["step"]) for t in tensors
                 if "step" in opt.state[t]}
        history.append(([t.detach().numpy().copy() for t in tensors], state,
                         steps))
    return history


# Differences from torch.optim over the 20 steps, relative to
# max(1, |value|): kiln computes the same operations in the same order, so
# what is left is a unit or two in the last place (PyTorch's kernels fuse
# some multiply-adds); seen: up to 4.4e-16 in float64, 2.4e-7 in float32.
@pytest.mark.parametrize("dtype,tolerance", [(np.float64, 1e-14),
                                             (np.float32, 1e-6)])
@pytest.mark.parametrize("name,factory,kwargs", CONFIGS, ids=CONFIG_IDS)
def test_against_torch(rng, name, factory, kwargs, dtype, tolerance):
    pytest.importorskip("torch")
    params = make_params(rng, dtype)
    grads = make_grads(rng, params, STEPS)
    history = run_kiln(factory, kwargs, params, grads)
    want = torch_run(factory, kwargs, params, grads)
    worst = 0.0
    for step, ((got_params, got_state), (want_params, want_state, steps)) \
            in enumerate(zip(history, want), start=1):
        for got, w in zip(kiln.tree_leaves(got_params), want_params):
            worst = max(worst, max_relative_difference(got, w))
        assert set(got_state) - {"count"} == set(want_state)
        for slot, w_leaves in want_state.items():
            for got, w in zip(kiln.tree_leaves(got_state[slot]), w_leaves):
                worst = max(worst, max_relative_difference(got, w))
        if factory != "sgd":
            assert steps == {float(step)}
        assert int(got_state["count"]) == step
    print(f"{name} {np.dtype(dtype).name}: max relative difference from "
          f"torch.optim {worst:.3g}")
    assert worst <= tolerance, f"{name}: {worst:.3g} > {tolerance:.3g}"


def test_adagrad_on_embedding_rows_equals_torch_sparse_adagrad():
    """An embedding bag trained by Adagrad: kiln-sparse-updates computes the
    step on the looked-up rows only (ids repeat within and across bags),
    which must equal PyTorch's Adagrad on nn.EmbeddingBag's sparse
    gradients (and its dense ones)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    vocabulary, dim, bags, per_bag = 40, 4, 6, 5
    table = rng.standard_normal((vocabulary, dim)).astype(np.float32)
    steps = [(rng.integers(0, 12, bags * per_bag),
              rng.standard_normal((bags, dim)).astype(np.float32))
             for _ in range(8)]
    rows = np.repeat(np.arange(bags), per_bag)
    opt = kiln.optim.adagrad(lr=0.3)

    @kiln.jit
    def step(params, state, ids, target):
        def loss(p):
            bag = kiln.ops.segment_sum(knp.take(p["table"], ids, axis=0), rows,
                                       bags)
            return knp.sum((bag - target) ** 2)
        grads = kiln.grad(loss)(params)
        return opt.update(params, grads, state)

    params = {"table": table}
    state = opt.init(params)
    for ids, target in steps:
        params, state = step(params, state, ids, target)

    for sparse in (True, False):
        bag = torch.nn.EmbeddingBag(vocabulary, dim, mode="sum", sparse=sparse)
        with torch.no_grad():
            bag.weight.copy_(torch.from_numpy(table))
        torch_opt = torch.optim.Adagrad(bag.parameters(), lr=0.3)
        offsets = torch.arange(0, bags * per_bag, per_bag)
        for ids, target in steps:
            torch_opt.zero_grad()
            out = bag(torch.from_numpy(ids), offsets)
            ((out - torch.from_numpy(target)) ** 2).sum().backward()
            torch_opt.step()
        np.testing.assert_allclose(params["table"], bag.weight.detach().numpy(),
                                   rtol=2e-6, atol=2e-6, err_msg=f"sparse={sparse}")
        np.testing.assert_allclose(
            state["sum"]["table"],
            torch_opt.state[bag.weight]["sum"].to_dense().numpy(),
            rtol=2e-6, atol=2e-6)
