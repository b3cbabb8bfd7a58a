#!/usr/bin/env bash
# Builds the ONNX-import fuzzer (clang, libFuzzer, ASan, UBSan) and runs it on the model corpus.
# Usage: scripts/fuzz.sh [SECONDS=60] [RUNS]   (RUNS caps the executions; time caps still apply)
# Env: FUZZ_JOBS (parallel fuzzing processes, default 1), FUZZ_MAX_LEN (bytes, default 1 MiB),
#      FUZZ_BUILD (build folder, default build-fuzz), FUZZ_NO_INSTALL=1 (skip apt).
# Exits non-zero when the fuzzer finds a crash, leak, timeout or sanitizer report; the input
# that triggered it is left in $FUZZ_BUILD/crashes/.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
runs=${2:-}
build=${FUZZ_BUILD:-build-fuzz}
jobs=${FUZZ_JOBS:-1}
max_len=${FUZZ_MAX_LEN:-1048576}
clang_ver=14  # Debian 12's clang; its compiler-rt has libFuzzer and the sanitizers

# --- toolchain (Debian 12, as root or through sudo, like scripts/setup.sh) --------------------
if [ "${FUZZ_NO_INSTALL:-0}" != 1 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  missing=()
  for p in clang-$clang_ver libclang-rt-$clang_ver-dev libonnx-dev libprotobuf-dev; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "fuzz: installing ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
fi
cxx=$(command -v clang++-$clang_ver || command -v clang++)

# --- build: the importer and the graph library, compiled straight from their sources -----------
# libonnx and protobuf come from Debian built with g++, so this links against libstdc++ (clang's
# default on Debian). Library code gets the sanitizers and libFuzzer's coverage hooks; only the
# fuzz target links libFuzzer's main.
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cxxflags="-std=c++20 -O1 -g $san -DONNX_ML=1 -DONNX_NAMESPACE=onnx -I. -w"
objdir=$build/obj
mkdir -p "$objdir"
sources=(graph/*.cpp graph/ops/*.cpp onnx_import/*.cpp)
objects=()
stale=()
for s in "${sources[@]}"; do
  o=$objdir/${s//\//_}.o
  objects+=("$o")
  if [ ! -f "$o" ] || [ "$s" -nt "$o" ] || [ "$0" -nt "$o" ]; then stale+=("$s"); fi
done
if [ ${#stale[@]} -gt 0 ]; then
  echo "fuzz: compiling ${#stale[@]} sources"
  # Headers change too; a stale object is cheap to redo, so a header edit means FUZZ_CLEAN=1.
  printf '%s\n' "${stale[@]}" | xargs -P "$(nproc)" -I{} sh -c \
    'o="$1/$(echo "$2" | tr / _).o"; exec "$3" $4 -fsanitize=fuzzer-no-link -c "$2" -o "$o"' \
    _ "$objdir" {} "$cxx" "$cxxflags"
fi
"$cxx" $cxxflags -fsanitize=fuzzer tests/fuzz/onnx_import_fuzzer.cpp "${objects[@]}" \
  -o "$build/onnx_import_fuzzer" -lonnx -lonnx_proto -lprotobuf -lpthread

# --- corpus: every model in the repository as a seed, into a work corpus kept between runs -----
corpus=$build/corpus
mkdir -p "$corpus" "$build/crashes"
seeds=0
while IFS= read -r -d '' f; do
  cp -n "$f" "$corpus/seed_$(echo "${f#./}" | tr / _)"
  seeds=$((seeds + 1))
done < <(find models tests/onnx_import tests/fuzz/seeds -name '*.onnx' -print0 2>/dev/null)
echo "fuzz: $seeds seed models, $(ls "$corpus" | wc -l) inputs in $corpus"

# --- run ------------------------------------------------------------------------------------------
args=(-max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -max_len="$max_len"
      -artifact_prefix="$build/crashes/" -print_final_stats=1)
if [ -n "$runs" ]; then args+=(-runs="$runs"); fi
if [ "$jobs" -gt 1 ]; then args+=(-jobs="$jobs" -workers="$jobs"); fi
log=$build/fuzz.log
set +e
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
  "$build/onnx_import_fuzzer" "${args[@]}" "$corpus" 2>&1 | tee "$log" | grep -v '^#[0-9]\|^[[:space:]]*NEW_FUNC'
rc=${PIPESTATUS[0]}
set -e
execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || true)
echo "fuzz: ${execs:-?} executions in at most $seconds s, exit status $rc (log: $log)"
if [ "$rc" -ne 0 ]; then
  echo "fuzz: FAILED; reproduce with $build/onnx_import_fuzzer <file from $build/crashes/>" >&2
  exit 1
fi
