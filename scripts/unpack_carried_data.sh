#!/usr/bin/env bash
# The images that scripts/prepare_gpu_carry.sh carries xz-compressed (to keep the carry under
# its limit) unpacked next to them, once, for cbtrain and the PyTorch drivers, which read IDX
# files raw or gzip-compressed. Nothing to do in a folder without .xz files.
#
#   bash scripts/unpack_carried_data.sh DATA_DIR
set -euo pipefail
DIR=${1:?usage: unpack_carried_data.sh DATA_DIR}
python3 - "$DIR" <<'PY'
import lzma, os, pathlib, shutil, sys
for xz in pathlib.Path(sys.argv[1]).glob("*.xz"):
    raw = xz.with_suffix("")
    if raw.exists():
        continue
    part = raw.with_name(raw.name + ".part")  # no half-written file under the final name
    with lzma.open(xz) as src, open(part, "wb") as dst:
        shutil.copyfileobj(src, dst)
    os.replace(part, raw)
PY
