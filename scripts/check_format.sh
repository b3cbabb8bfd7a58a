#!/usr/bin/env bash
# Checks that every C++ and CUDA file of the repository is as clang-format 14 (Debian 12's,
# installed by scripts/setup.sh) writes it with the project's .clang-format, and names those
# that are not with the first lines of their difference; `--fix` rewrites them instead.
# Exit 0 when all are formatted, 1 when some are not, 77 (skipped) with another clang-format.
set -euo pipefail
cd "$(dirname "$0")/.."
cf=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$cf" ]; then
  echo "check_format: clang-format not found; scripts/setup.sh installs it"
  exit 1
fi
major=$("$cf" --version | sed -n 's/.*version \([0-9]*\).*/\1/p')
if [ "$major" != 14 ]; then
  echo "check_format: $cf is version $major; the files are formatted by version 14 (Debian 12's): skipped"
  exit 77
fi
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.cu' '*.cuh')
else  # an unpacked source archive
  mapfile -t files < <(find onnx_import graph runtime ops tools tests include tensorboard docs \
    \( -name '*.cpp' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) 2> /dev/null | sort)
fi
if [ "${1:-}" = --fix ]; then
  "$cf" -i "${files[@]}"
  echo "check_format: ${#files[@]} files formatted"
  exit 0
fi
bad=0
for f in "${files[@]}"; do
  if ! "$cf" --dry-run --Werror "$f" > /dev/null 2>&1; then
    echo "not formatted: $f (bash scripts/check_format.sh --fix rewrites it)"
    diff <("$cf" "$f") "$f" | head -8 || true
    bad=$((bad + 1))
  fi
done
if [ "$bad" -gt 0 ]; then
  echo "check_format: $bad of ${#files[@]} files differ from clang-format's"
  exit 1
fi
echo "check_format: all ${#files[@]} files formatted"
