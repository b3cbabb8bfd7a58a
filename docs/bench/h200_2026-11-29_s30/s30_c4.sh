#!/usr/bin/env bash
# Session 30, call 4 (one H200): call 1 again at the session's final code (the test suite in
# a CUDA build, the GPU out-of-memory messages), then a label outside the model's classes on
# the GPU: refused before training, naming the sample.
set -uo pipefail
OUT=${OUT:?}
bash docs/bench/h200_2026-11-29_s30/s30_c1.sh
D=$(mktemp -d)
python3 - "$PWD/.device/data" "$D" <<'PY'
import gzip, pathlib, shutil, sys
src, dst = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
for f in src.iterdir():
    if f.suffix != ".xz":
        shutil.copy(f, dst / f.name)
labels = bytearray(gzip.open(dst / "train-labels-idx1-ubyte.gz").read())
labels[8 + 59000] = 11  # training sample 59000: label 11 of 10 classes
with gzip.open(dst / "train-labels-idx1-ubyte.gz", "wb") as f:
    f.write(labels)
PY
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$PWD/.device/onnx/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
ls $D
./build-gpu/tools/cbtrain models/resnet20/resnet20.ts17.onnx --device cuda --learners 4 --data $D --epochs 1 > $OUT/bad_label.txt 2>&1
echo "bad label on the GPU: rc $? | $(tail -1 $OUT/bad_label.txt) | epoch lines: $(grep -c '^epoch' $OUT/bad_label.txt)"
