#!/usr/bin/env python3
"""Runs the cbtrain binary for the benchmark and collects its results as JSON.

    python3 bench/cbtrain_runs.py throughput --cbtrain BIN --models-dir DIR \
        --models lenet5,resnet32 --batches 8,16,32,64 --ks 1,2,4,8,16,auto \
        --steps 200 --warmup 20 --out cbtrain_throughput.json --logs LOGDIR
    python3 bench/cbtrain_runs.py tta --cbtrain BIN --model DIR/lenet5.onnx --name lenet5 \
        --batch 32 --learners auto --epochs 15 --lr 0.02 --schedule constant --target 0.90 \
        --seed 1 --data DATA --out tta.json --logs LOGDIR [-- EXTRA CBTRAIN FLAGS]

throughput runs `BIN bench MODEL --device cuda --batch-size B --learners K --steps N
--warmup W --json` once per (model, batch, K) and keeps the last JSON object of its output
that has "images_per_sec". tta runs `BIN MODEL --device cuda ... --metrics M.jsonl` and turns
the metrics lines (epoch, test_accuracy, elapsed_s) into the schema of
torch_time_to_accuracy.py, plus autotune_seconds: what the learner search spent before training
(autotune_s of the metrics: the build of its trainer when it tunes while training, the whole
search with --autotune-when before), which the report adds to the training seconds. A failure (exit code, timeout, no JSON) is recorded with its
reason instead of a result; the script itself exits 0 so that the benchmark goes on.

Several GPUs: `--gpus 0,1,2,3` is passed on to cbtrain (K learners on each GPU; "learners"
in its JSON counts all of them). tta --stop-at-target ends cbtrain with SIGTERM (it stops at
the next round boundary) as soon as a metrics line reaches the target, and --budget S ends
it the same way after S seconds of wall clock ("stopped": "budget"); --timeout kills it.
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time

# NVLink multicast stays off in NCCL, whatever the caller's environment says.
os.environ.update({"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
                   "NVSHMEM_DISABLE_NVLS": "1"})


def run_logged(cmd, log_path, timeout):
    """Run cmd, write its output to log_path; returns (rc or None on timeout, output, seconds)."""
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, text=True, errors="replace")
        rc, out = p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        rc = None
        out = e.stdout if isinstance(e.stdout, str) else (e.stdout or b"").decode("utf-8", "replace")
    except OSError as e:
        rc, out = -1, f"cannot run {cmd[0]}: {e}\n"
    dt = time.perf_counter() - t0
    with open(log_path, "w") as f:
        f.write("$ " + " ".join(cmd) + "\n" + out)
        f.write(f"\n[exit {rc if rc is not None else 'timeout'} after {dt:.1f} s]\n")
    return rc, out, dt


def run_watched(cmd, log_path, timeout, should_stop=None, poll=0.25, grace=30):
    """Run cmd with its output going to log_path; every `poll` seconds should_stop(elapsed)
    may return a reason to end it with SIGTERM (SIGKILL after `grace` seconds); past
    `timeout` seconds it is killed. Returns (rc or None on timeout, output, seconds, reason
    it was stopped for or None)."""
    t0 = time.perf_counter()
    stop_reason, term_at, rc = None, None, None
    with open(log_path, "w") as log:
        log.write("$ " + " ".join(cmd) + "\n")
        log.flush()
        try:
            p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        except OSError as e:
            log.write(f"cannot run {cmd[0]}: {e}\n")
            rc = -1
            p = None
        while p is not None:
            try:
                rc = p.wait(timeout=poll)
                break
            except subprocess.TimeoutExpired:
                pass
            el = time.perf_counter() - t0
            if el > timeout:
                p.kill()
                p.wait()
                rc = None
                break
            if term_at is None and should_stop is not None:
                stop_reason = should_stop(el)
                if stop_reason:
                    p.send_signal(signal.SIGTERM)
                    term_at = el
            elif term_at is not None and el - term_at > grace:
                p.kill()
        dt = time.perf_counter() - t0
    with open(log_path, errors="replace") as f:
        out = f.read().split("\n", 1)[-1]
    with open(log_path, "a") as f:
        f.write(f"\n[exit {rc if rc is not None else 'timeout'} after {dt:.1f} s"
                + (f"; stopped: {stop_reason}" if stop_reason else "") + "]\n")
    return rc, out, dt, stop_reason


def read_metrics(path):
    history = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line:
                    try:
                        history.append(json.loads(line))
                    except ValueError:
                        pass  # a line being written
    return history


def gpu_list(s):
    """"0,1,2" -> [0, 1, 2]; "" -> []."""
    if not s:
        return []
    try:
        ids = [int(x) for x in s.split(",")]
    except ValueError:
        ids = [-1]
    if any(i < 0 for i in ids) or len(set(ids)) != len(ids):
        raise argparse.ArgumentTypeError(f"--gpus takes a list like 0,1,2,3, not '{s}'")
    return ids


def chosen_per_device(out):
    """K from the auto-tuner's "autotune: chose K learner(s) per device" line, or None."""
    m = re.findall(r"chose (\d+) learner", out)
    return int(m[-1]) if m else None


# CLI11 ends cbtrain's usage errors with this line; the one before it says what was wrong.
HELP_TRAILER = "Run with --help for more information."


def failure_reason(rc, out, timeout):
    if rc is None:
        return f"timed out after {timeout} s"
    lines = [l.strip() for l in out.splitlines() if l.strip() and l.strip() != HELP_TRAILER]
    errs = [l for l in lines if "error" in l.lower()]
    last = (errs or lines or ["no output"])[-1]
    return f"exit {rc}: {last[:200]}"


def json_objects(out):
    objs = []
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                objs.append(json.loads(line))
            except ValueError:
                pass
    return objs


def write_json(path, doc):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, path)


def cmd_throughput(a):
    os.makedirs(a.logs, exist_ok=True)
    ngpus = max(1, len(a.gpus))
    doc = dict(tool="cbtrain", cbtrain=a.cbtrain, steps=a.steps, warmup=a.warmup,
               timeout_s=a.timeout, runs=[])
    gpu_flags, tag = [], ""
    if a.gpus:
        doc["gpus"] = ngpus
        gpu_flags = ["--gpus", ",".join(map(str, a.gpus))]
        tag = f"_g{ngpus}"
    for model in a.models.split(","):
        path = os.path.join(a.models_dir, f"{model}.onnx")
        for b in [int(x) for x in a.batches.split(",")]:
            for k in a.ks.split(","):
                cmd = [a.cbtrain, "bench", path, "--device", "cuda", "--batch-size", str(b),
                       "--learners", k, "--steps", str(a.steps), "--warmup", str(a.warmup),
                       "--json"] + gpu_flags + a.extra
                log = os.path.join(a.logs, f"cbtrain_bench_{model}_b{b}_k{k}{tag}.log")
                rc, out, dt = run_logged(cmd, log, a.timeout)
                rec = dict(model=model, batch=b, learners_requested=k, seconds=dt,
                           cmd=" ".join(cmd), log=os.path.basename(log))
                if a.gpus:
                    rec["gpus"] = ngpus
                objs = [o for o in json_objects(out) if "images_per_sec" in o]
                if rc == 0 and objs:
                    rec.update(objs[-1])
                    rec["model"] = model  # our short name, whatever path the tool printed
                    rec["error"] = None
                    if a.gpus and isinstance(rec.get("learners"), int):
                        rec["learners_per_gpu"] = rec["learners"] // ngpus
                        rec["images_per_sec_per_gpu"] = rec["images_per_sec"] / ngpus
                    if len(objs) > 1:
                        rec["all_results"] = objs
                else:
                    rec["error"] = failure_reason(rc, out, a.timeout) if rc != 0 else \
                        "exit 0 but no JSON line with images_per_sec"
                print(f"cbtrain {model} b={b} k={k}: " +
                      (f"{rec['images_per_sec']:.0f} img/s (learners {rec.get('learners')})"
                       if rec["error"] is None else f"FAILED {rec['error']}"), flush=True)
                doc["runs"].append(rec)
                write_json(a.out, doc)
    doc["complete"] = True
    write_json(a.out, doc)


def cmd_tta(a):
    os.makedirs(a.logs, exist_ok=True)
    ngpus = max(1, len(a.gpus))
    tag = f"_g{ngpus}" if a.gpus else ""
    stem = f"cbtrain_tta_{a.name}_b{a.batch}_k{a.learners}{tag}_s{a.seed}"
    metrics = os.path.join(a.logs, stem + ".metrics.jsonl")
    if os.path.exists(metrics):
        os.remove(metrics)
    cmd = [a.cbtrain, a.model, "--device", "cuda", "--batch-size", str(a.batch),
           "--learners", a.learners, "--epochs", str(a.epochs), "--lr", str(a.lr),
           "--lr-schedule", a.schedule, "--seed", str(a.seed), "--metrics", metrics,
           "--data", a.data] + (["--gpus", ",".join(map(str, a.gpus))] if a.gpus else []) + a.extra

    def should_stop(elapsed):
        if a.stop_at_target and any(h.get("test_accuracy", 0) >= a.target
                                    for h in read_metrics(metrics)):
            return "target"
        if a.budget and elapsed > a.budget:
            return "budget"
        return None

    rc, out, dt, stop_reason = run_watched(cmd, os.path.join(a.logs, stem + ".log"), a.timeout,
                                           should_stop)
    history = read_metrics(metrics)
    reached = next((h for h in history if h.get("test_accuracy", 0) >= a.target), None)
    # cbtrain exits 143 when SIGTERM stopped it at a round boundary: that is our doing.
    stopped_by_us = stop_reason is not None and rc in (0, 143, -signal.SIGTERM)
    if rc is None:
        stopped = "timeout"
    elif stop_reason is not None:
        stopped = stop_reason
    else:
        stopped = "end"
    doc = dict(tool="cbtrain", model=a.name, batch=a.batch, learners=a.learners, lr=a.lr,
               schedule=a.schedule, target=a.target, max_epochs=a.epochs, seed=a.seed,
               epochs=len(history),
               train_seconds=history[-1].get("elapsed_s") if history else None,
               accuracy=[h.get("test_accuracy") for h in history],
               elapsed_s=[h.get("elapsed_s") for h in history],
               reached=reached is not None,
               epochs_to_target=reached.get("epoch") if reached else None,
               seconds_to_target=reached.get("elapsed_s") if reached else None,
               # the learner search before training (--learners auto), off the training clock
               autotune_seconds=history[0].get("autotune_s", 0.0) if history else None,
               history=history, wall_seconds=dt, cmd=" ".join(cmd), stopped=stopped,
               budget_s=a.budget or None,
               error=None if rc == 0 or stopped_by_us else failure_reason(rc, out, a.timeout),
               complete=True)
    if a.gpus:
        doc["gpus"] = ngpus
    # The learner count chosen by --learners auto: from the metrics if they carry it,
    # else the log line that names it.
    # (tuning while training: the count of each epoch; the one that reached the target, or the last)
    by_epoch = [h["learners"] for h in history if isinstance(h.get("learners"), int)]
    if by_epoch:
        doc["learners_by_epoch"] = by_epoch
        doc["learners_chosen"] = (reached or history[-1]).get("learners", by_epoch[-1])
    for line in out.splitlines():
        if "learner" in line.lower() and ("auto" in line.lower() or "chose" in line.lower()):
            doc["learners_log_line"] = line.strip()[:200]
    per_device = chosen_per_device(out)
    if per_device is not None:
        doc["learners_per_gpu"] = per_device
        doc.setdefault("learners_chosen", per_device * ngpus)
    elif a.learners.isdigit():
        doc["learners_per_gpu"] = int(a.learners)
    write_json(a.out, doc)
    print(f"cbtrain tta {a.name} b={a.batch} k={a.learners}{' on %d GPUs' % ngpus if a.gpus else ''}"
          f" seed {a.seed}: " +
          (f"{len(history)} epochs, reached at epoch {doc['epochs_to_target']} "
           f"({doc['seconds_to_target']} s)" if reached else
           f"{len(history)} epochs, target not reached") +
          (f" [stopped: {stopped}]" if stopped != "end" else "") +
          (f"; FAILED {doc['error']}" if doc["error"] else ""), flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("throughput")
    t.add_argument("--cbtrain", required=True)
    t.add_argument("--models-dir", required=True)
    t.add_argument("--models", default="lenet5,resnet32")
    t.add_argument("--batches", default="8,16,32,64")
    t.add_argument("--ks", default="1,2,4,8,16,auto")
    t.add_argument("--steps", type=int, default=200)
    t.add_argument("--warmup", type=int, default=20)
    t.add_argument("--timeout", type=int, default=180, help="seconds per cbtrain run")
    t.add_argument("--gpus", type=gpu_list, default=[], help="e.g. 0,1,2,3: passed on to cbtrain")
    t.add_argument("--out", required=True)
    t.add_argument("--logs", required=True)
    t.add_argument("extra", nargs="*", help="further cbtrain flags (after --)")
    r = sub.add_parser("tta")
    r.add_argument("--cbtrain", required=True)
    r.add_argument("--model", required=True, help="ONNX file")
    r.add_argument("--name", required=True, help="model name for the report")
    r.add_argument("--batch", type=int, default=32)
    r.add_argument("--learners", default="auto")
    r.add_argument("--epochs", type=int, default=15)
    r.add_argument("--lr", type=float, default=0.02)
    r.add_argument("--schedule", default="constant")
    r.add_argument("--target", type=float, default=0.90)
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--data", required=True)
    r.add_argument("--timeout", type=int, default=900, help="seconds for the cbtrain run")
    r.add_argument("--gpus", type=gpu_list, default=[], help="e.g. 0,1,2,3: passed on to cbtrain")
    r.add_argument("--stop-at-target", action="store_true",
                   help="stop cbtrain (SIGTERM) once a metrics line reaches --target")
    r.add_argument("--budget", type=float, default=0,
                   help="stop cbtrain (SIGTERM) after this many seconds of wall clock; 0: none")
    r.add_argument("--out", required=True)
    r.add_argument("--logs", required=True)
    r.add_argument("extra", nargs="*", help="further cbtrain flags (after --)")
    a = ap.parse_args(argv)
    if a.cmd == "throughput":
        cmd_throughput(a)
    else:
        cmd_tta(a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
