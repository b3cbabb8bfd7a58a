#!/usr/bin/env bash
# Records what a person watching a training run in a terminal sees: runs cbtrain inside a
# detached tmux session (a real terminal, so the progress bar is on) and takes
# `tmux capture-pane -p` snapshots while it runs. Needs tmux (apt-get install tmux); the
# tests do not use this script.
#
#   scripts/record_progress.sh [OUT=docs/progress-capture.txt] [SNAPSHOTS=5] [INTERVAL_S=2]
#
# Env: CBTRAIN (default build/tools/cbtrain), CBT_ARGS (training flags; default: LeNet-5 on
# Fashion-MNIST, 2 epochs, batch 64, 2 learners).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/progress-capture.txt}
snapshots=${2:-5}
interval=${3:-2}
bin=${CBTRAIN:-$PWD/build/tools/cbtrain}
args=${CBT_ARGS:-models/lenet5/lenet5.ts17.onnx --epochs 2 --batch-size 64 -k 2}
command -v tmux >/dev/null || { echo "record_progress.sh needs tmux (apt-get install tmux)" >&2; exit 2; }
[ -x "$bin" ] || { echo "no cbtrain at $bin; build first (scripts/build.sh)" >&2; exit 2; }

session="cbt_record_$$"
done_flag=$(mktemp)
rm -f "$done_flag"
trap 'tmux kill-session -t "$session" 2>/dev/null || true; rm -f "$done_flag"' EXIT
tmux new-session -d -s "$session" -x 150 -y 50 \
  "$bin $args --progress auto; echo \"[cbtrain exited with \$?]\"; touch $done_flag; sleep 600"

{
  echo "# cbtrain $args"
  echo "# tmux capture-pane snapshots, ${interval}s apart, of a detached 150x50 session"
} > "$out"
for i in $(seq 1 "$snapshots"); do
  sleep "$interval"
  {
    echo
    echo "=== snapshot $i (t = $((i * interval)) s) ==="
    tmux capture-pane -p -t "$session" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'
  } >> "$out"
  [ -e "$done_flag" ] && break
done
# The end of the run: its summary.
for _ in $(seq 1 300); do [ -e "$done_flag" ] && break; sleep 1; done
{
  echo
  echo "=== at the end ==="
  tmux capture-pane -p -t "$session" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'
} >> "$out"
echo "wrote $out"
