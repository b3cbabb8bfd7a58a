#!/usr/bin/env bash
# Installs a built cbtrain into a temporary prefix and builds and runs docs/example against
# it with find_package(cbtrain); then makes the .deb with CPack, unpacks it into another
# prefix and does the same there.
#   scripts/package_check.sh BUILD_DIR WORK_DIR MODEL.onnx DATA_DIR
set -euo pipefail
build=$(realpath "$1"); work=$2; model=$(realpath "$3"); data=$(realpath "$4")
src=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$work"; mkdir -p "$work"; work=$(realpath "$work")
generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); fi

example() {  # example PREFIX NAME: build docs/example against PREFIX and run it
  cmake -S "$src/docs/example" -B "$work/example-$2" "${generator[@]}" -DCMAKE_PREFIX_PATH="$1" >/dev/null
  cmake --build "$work/example-$2" >/dev/null
  "$work/example-$2/train_model" "$model" "$data" "$work/$2.onnx" 100
  test -s "$work/$2.onnx"
}

echo "== cmake --install into $work/prefix"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
"$work/prefix/bin/cbtrain" --version
example "$work/prefix" install

echo "== cpack -G DEB"
(cd "$work" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/deb" >/dev/null)
deb=$(ls "$work"/deb/cbtrain_*.deb)
dpkg-deb --field "$deb" Package Version Architecture Depends
dpkg-deb -x "$deb" "$work/debroot"
"$work/debroot/usr/bin/cbtrain" --version
example "$work/debroot/usr" deb
echo "package check passed: $(basename "$deb")"
