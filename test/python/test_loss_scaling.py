"""kiln.optim.LossScaler: torch.amp.GradScaler's dynamic loss scaling traced
into a compiled step. The skip / back off / grow rules are checked step by
step against a host-side model of them, and an f16 autocast training run
that starts from a scale so large that the f16 products overflow recovers
and converges."""

import numpy as np
import pytest

import kiln
import kiln.numpy as knp


def test_skips_backs_off_and_grows():
    opt = kiln.optim.sgd(0.5)
    scaler = kiln.optim.LossScaler(init_scale=8.0, growth_interval=2)

    @kiln.jit
    def step(p, g, state, sstate):
        return scaler.update(opt, p, g, state, sstate)

    p = np.array([1.0, 2.0, 3.0], np.float32)
    state, sstate = opt.init(p), scaler.init()
    scale, tracker = 8.0, 0
    for scaled_grad in ([8.0, -16.0, 4.0], [16.0, 8.0, -8.0],
                        [1.0, np.inf, 1.0], [np.nan, 0.0, 0.0],
                        [4.0, 4.0, -4.0]):
        g = np.array(scaled_grad, np.float32)
        finite = bool(np.all(np.isfinite(g)))
        want = p - 0.5 * (g / scale) if finite else p
        if finite:
            tracker += 1
            if tracker == 2:
                scale, tracker = scale * 2, 0
        else:
            scale, tracker = scale * 0.5, 0
        p, state, sstate, skipped = step(p, g, state, sstate)
        np.testing.assert_array_equal(p, want.astype(np.float32))
        assert bool(skipped) == (not finite)
        assert float(sstate["scale"]) == scale
        assert int(sstate["growth_tracker"]) == tracker


def test_f16_training_recovers_from_an_overflowing_scale(rng):
    w_true = rng.standard_normal((16, 4)).astype(np.float32)
    x = rng.standard_normal((64, 16)).astype(np.float32)
    y = x @ w_true
    opt = kiln.optim.sgd(0.1)
    scaler = kiln.optim.LossScaler(init_scale=2.0 ** 40)

    def train_step(w, state, sstate, x, y):
        scaled, grad = kiln.value_and_grad(
            lambda w: scaler.scale(knp.mean((x @ w - y) ** 2), sstate))(w)
        w, state, sstate, skipped = scaler.update(opt, w, grad, state,
                                                  sstate)
        return scaled / sstate["scale"], w, state, sstate, skipped

    step = kiln.jit(train_step, autocast="f16")
    w = np.zeros((16, 4), np.float32)
    state, sstate = opt.init(w), scaler.init()
    skipped_steps, losses = 0, []
    for _ in range(300):
        _, w, state, sstate, skipped = step(w, state, sstate, x, y)
        skipped_steps += bool(skipped)
    final = float(np.mean((x @ w - y) ** 2))
    # 2^40 overflows f16 (largest finite 65504) in the backward products:
    # the first steps are skipped until the scale fits, then it trains.
    assert 10 <= skipped_steps < 40
    assert float(sstate["scale"]) < 2.0 ** 40
    assert final < 1e-2 * float(np.mean(y ** 2))


def test_bad_arguments_are_refused():
    with pytest.raises(Exception, match="growthFactor > 1"):
        kiln.optim.LossScaler(growth_factor=0.5)
    scaler = kiln.optim.LossScaler()
    with pytest.raises(TypeError, match="inside kiln.jit"):
        scaler.update(kiln.optim.sgd(0.1), np.zeros(2, np.float32),
                      np.zeros(2, np.float32), {}, scaler.init())
