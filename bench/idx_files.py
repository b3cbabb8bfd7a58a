"""Fashion-MNIST's IDX files (optionally gzipped) as numpy arrays, for the benchmark drivers."""

import gzip
import os

import numpy as np


def read_idx(path):
    """An IDX file (optionally gzipped) as a numpy array of its dims."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0:
        raise ValueError(f"{path}: not an IDX file")
    dtype = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4",
             0x0E: ">f8"}[data[2]]
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    arr = np.frombuffer(data, dtype=dtype, offset=4 + 4 * ndim)
    if arr.size != int(np.prod(dims)):
        raise ValueError(f"{path}: {arr.size} values, dims {dims}")
    return arr.reshape(dims)


def find(folder, stem):
    """folder/stem.gz or folder/stem; exits naming what is missing."""
    for name in (stem + ".gz", stem):
        p = os.path.join(folder, name)
        if os.path.exists(p):
            return p
    raise SystemExit(f"{folder}: no {stem}[.gz]")
