#!/usr/bin/python3
"""Checks kiln's gradients and a kiln training run against PyTorch.

1. Gradients: export_gradients writes an MLP and an Elman RNN (tanh cell,
   fori_loop) with random weights and kiln's natively compiled loss and
   gradients; torch autograd recomputes them from the same files. The
   relative error of a tensor is max|kiln - torch| / max|torch|; it must be
   below 1e-5 in f64 and 1e-4 in f32.
2. Training: train_digits runs 100 steps (f32, batch 64) with each of its
   optimizers -- plain SGD (lr 0.3), SGD with momentum 0.9 (lr 0.05) and
   Adam (lr 1e-3), all from kiln/Optim.h -- and writes its initial weights
   and loss curve; the same model, batches and torch.optim optimizer in
   torch from those weights must give losses within 1e-4 relative at every
   step.

Usage: compare_torch.py BIN_DIR [DATA_DIR]
  BIN_DIR holds export_gradients and train_digits (build/examples).
Exits 0 when everything agrees, 1 on a mismatch, 77 (printing SKIP and the
reason) when numpy or torch is missing. Debian: apt-get install -y
python3-torch, with /usr/bin/python3.
"""
import os
import subprocess
import sys
import tempfile

SKIP = 77

try:
    import numpy as np
    import torch
except ImportError as e:
    print(f"SKIP: compare_torch.py needs numpy and torch ({e}); "
          "apt-get install -y python3-torch")
    sys.exit(SKIP)

HERE = os.path.dirname(os.path.abspath(__file__))
STEPS, BATCH, TRAIN_ROWS = 100, 64, 1500

# train_digits --optimizer NAME: its learning rate and torch's optimizer.
OPTIMIZERS = {
    "sgd": (0.3, lambda params: torch.optim.SGD(params, lr=0.3)),
    "momentum": (0.05, lambda params: torch.optim.SGD(params, lr=0.05,
                                                      momentum=0.9)),
    "adam": (1e-3, lambda params: torch.optim.Adam(params, lr=1e-3)),
}


def relative_error(kiln, ref):
    ref = np.asarray(ref, dtype=np.float64)
    kiln = np.asarray(kiln, dtype=np.float64)
    return float(np.max(np.abs(kiln - ref)) / max(np.max(np.abs(ref)), 1e-30))


def mlp_loss(t):
    hidden = torch.tanh(t["x"] @ t["w1"] + t["b1"])
    z = hidden @ t["w2"] + t["b2"]
    return -(t["onehot"] * torch.log_softmax(z, -1)).sum(1).mean()


def rnn_loss(t):
    h = t["h0"]
    for step in range(t["xs"].shape[0]):
        h = torch.tanh(t["xs"][step] @ t["wx"] + h @ t["wh"] + t["b"])
    err = h @ t["wo"] - t["targets"]
    return (err * err).mean()


MODELS = {
    "mlp": (mlp_loss, ["w1", "b1", "w2", "b2", "x", "onehot"],
            ["w1", "b1", "w2", "b2", "x"]),
    "rnn": (rnn_loss, ["wx", "wh", "b", "wo", "xs", "h0", "targets"],
            ["wx", "wh", "b", "wo", "h0"]),
}


def check_gradients(bin_dir, dtype, tolerance):
    ok = True
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([os.path.join(bin_dir, "export_gradients"), "--dtype",
                        dtype, "--out", out], check=True,
                       stdout=subprocess.DEVNULL)
        for name, (loss_fn, inputs, wrt) in MODELS.items():
            t = {i: torch.from_numpy(np.load(f"{out}/{name}_{i}.npy"))
                 for i in inputs}
            for i in wrt:
                t[i].requires_grad_(True)
            loss = loss_fn(t)
            loss.backward()
            errors = {"loss": relative_error(
                np.load(f"{out}/{name}_loss.npy"), loss.detach().numpy())}
            for i in wrt:
                errors["d" + i] = relative_error(
                    np.load(f"{out}/{name}_grad_{i}.npy"), t[i].grad.numpy())
            worst = max(errors, key=errors.get)
            good = errors[worst] <= tolerance
            ok &= good
            print(f"{'ok  ' if good else 'FAIL'} gradients {name} {dtype}: "
                  f"max relative error {errors[worst]:.2e} ({worst}), "
                  f"tolerance {tolerance:.0e}")
    return ok


def check_training(bin_dir, data_dir, optimizer, tolerance=1e-4):
    lr, make_optimizer = OPTIMIZERS[optimizer]
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([os.path.join(bin_dir, "train_digits"), "--data",
                        data_dir, "--steps", str(STEPS), "--batch",
                        str(BATCH), "--optimizer", optimizer, "--lr", str(lr),
                        "--dtype", "f32", "--out", out],
                       check=True, stdout=subprocess.DEVNULL)
        params = [torch.from_numpy(np.load(f"{out}/init_{n}.npy"))
                  .requires_grad_(True) for n in ("w1", "b1", "w2", "b2")]
        kiln_losses = np.load(f"{out}/losses.npy")
    images = np.load(f"{data_dir}/digits_images.npy") / np.float32(16)
    labels = np.load(f"{data_dir}/digits_labels.npy")
    onehot = np.eye(10, dtype=np.float32)[labels]
    w1, b1, w2, b2 = params
    torch_optimizer = make_optimizer(params)
    torch_losses = []
    for k in range(STEPS):
        rows = (k * BATCH + np.arange(BATCH)) % TRAIN_ROWS
        x = torch.from_numpy(images[rows])
        y = torch.from_numpy(onehot[rows])
        z = torch.relu(x @ w1 + b1) @ w2 + b2
        loss = -(y * torch.log_softmax(z, -1)).sum(1).mean()
        torch_optimizer.zero_grad()
        loss.backward()
        torch_optimizer.step()
        torch_losses.append(loss.item())
    torch_losses = np.array(torch_losses)
    diff = np.abs(kiln_losses - torch_losses) / np.abs(torch_losses)
    good = len(kiln_losses) == STEPS and float(diff.max()) <= tolerance
    print(f"{'ok  ' if good else 'FAIL'} digits loss curve, {optimizer}, "
          f"{STEPS} steps f32: "
          f"max relative difference {diff.max():.2e} (step "
          f"{int(diff.argmax())}), tolerance {tolerance:.0e}; loss "
          f"{torch_losses[0]:.4f} -> {torch_losses[-1]:.4f}")
    return good


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    bin_dir = sys.argv[1]
    data_dir = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "data")
    torch.set_num_threads(1)
    ok = check_gradients(bin_dir, "f64", 1e-5)
    ok &= check_gradients(bin_dir, "f32", 1e-4)
    for optimizer in OPTIMIZERS:
        ok &= check_training(bin_dir, data_dir, optimizer)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
