#!/usr/bin/env bash
# Session 21 calls 5 and 6: the CUDA suite at the session's final code; bench/models.py, which now
# imports LeNet-5 and the basic block from models/export_torch.py, against its previous copy
# (.device/session/old_models.py, which defined them itself): the same seed must export the
# same ONNX files byte for byte.
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
T1=$SECONDS
timeout 300 ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "suite rc $? after $((SECONDS-T1)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED" $R/tests.txt | head -12
grep -E "DirectConv\.|DirectKernelsMatch|ConvChoices" $R/tests.txt | grep -E "OK|FAILED" | head -14
mkdir -p /tmp/oldbench && cp .device/session/old_models.py /tmp/oldbench/models.py
$PY /tmp/oldbench/models.py --out $R/old_models > $R/export_old.txt 2>&1; echo "old export rc $?"
$PY bench/models.py --out $R/new_models > $R/export_new.txt 2>&1; echo "new export rc $?"
for f in lenet5 resnet20 resnet32; do
  cmp $R/old_models/$f.onnx $R/new_models/$f.onnx && echo "$f.onnx identical ($(stat -c %s $R/new_models/$f.onnx) bytes)"
done
tail -3 $R/export_new.txt
echo "total $((SECONDS-T0)) s"
rm -rf $R/check $R/old_models $R/new_models; xz -9 $R/tests.txt; tar czf $OUT/r.tgz -C $OUT r; rm -rf $R
