#!/usr/bin/python3
"""Writes scikit-learn's copy of the UCI optdigits test set as .npy files.

Run once to produce data/digits_images.npy (float32 [1797, 64], pixel counts
0..16 of 8x8 images, row-major) and data/digits_labels.npy (int64 [1797],
0..9); the files are kept in the repository so nothing else needs
scikit-learn. Debian: apt-get install -y python3-sklearn.
"""
import os
import sys

import numpy as np
from sklearn.datasets import load_digits

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "data")
digits = load_digits()
np.save(os.path.join(out, "digits_images.npy"),
        np.ascontiguousarray(digits.data, dtype=np.float32))
np.save(os.path.join(out, "digits_labels.npy"),
        np.ascontiguousarray(digits.target, dtype=np.int64))
print(f"wrote {digits.data.shape[0]} images to {out}")
