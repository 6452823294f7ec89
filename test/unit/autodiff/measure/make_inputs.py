#!/usr/bin/python3
"""Writes the inputs of rnn_for.mlir / rnn_while.mlir as .npy files into the
directory given as the only argument (default: the current one)."""
import os
import sys

try:
    import numpy as np
except ImportError:
    print("skipped: numpy is not installed (Debian's /usr/bin/python3 has it)")
    sys.exit(0)

out = sys.argv[1] if len(sys.argv) > 1 else "."
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(0)
np.save(os.path.join(out, "h0.npy"), (rng.standard_normal((32, 256)) * 0.5).astype(np.float32))
np.save(os.path.join(out, "w.npy"), (rng.standard_normal((256, 256)) / 16).astype(np.float32))
np.save(os.path.join(out, "xs.npy"), (rng.standard_normal((64, 32, 256)) * 0.5).astype(np.float32))
