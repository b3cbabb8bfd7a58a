#!/usr/bin/env python3
"""Writes OUT_DIR/MULTI_GPU.md and OUT_DIR/results/mg_summary.json from the multi-GPU runs.

    python3 bench/report_multi_gpu.py OUT_DIR
    python3 bench/report_multi_gpu.py --is-done RESULT.json NOMINAL_CAP_SECONDS

Reads what bench/run_multi_gpu.sh writes: OUT_DIR/results/mg_ddp_throughput_g<N>.json,
mg_cbtrain_throughput_<model>_g<N>.json, mg_tta_{ddp,cbtrain}_<model>_g<N>_s<seed>.json,
OUT_DIR/env/mg_*.txt and OUT_DIR/logs/mg_{runs.tsv,stages.txt}. Speed-ups are over the
smallest GPU count measured (one GPU in a normal run). Missing or failed entries appear as
"—" with the reason in a note. --is-done exits 0 when RESULT.json holds a finished run that
need not be repeated (one cut short by a cap below NOMINAL_CAP_SECONDS must be), else 1.
Standard library only.
"""

import glob
import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import DASH, MODEL_TITLE, Notes, fmt_ips, median_range, read_text, table  # noqa: E402

TPUT_MODELS = ["lenet5", "resnet32"]
TTA_MODELS = ["lenet5", "resnet20"]
EFFICIENCY_GOAL = 0.8   # issue 9: at least 0.8 x linear speed-up in throughput
TWO_GPU_GOAL = 0.5      # issue 5: on two GPUs cbtrain reaches each target in <= 1/2 of DDP's time


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def is_done(path, nominal):
    """Whether the result file holds a run that need not be repeated."""
    doc = load_json(path)
    if not isinstance(doc, dict) or not doc.get("complete"):
        return False
    if doc.get("stopped") in ("budget", "timeout") and not doc.get("reached"):
        # Stopped by a cap smaller than the run's own (the call's budget ran short): again.
        if (doc.get("budget_s") or 0) < nominal:
            return False
    timeout = doc.get("timeout_s")
    if isinstance(timeout, (int, float)) and timeout < nominal and any(
            "timed out" in str(r.get("error") or "") for r in doc.get("runs", [])):
        return False
    return True


def gpus(n):
    return f"{n} GPU" + ("" if n == 1 else "s")


def num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def first_line(s, n=160):
    s = str(s or "").strip().splitlines()
    return (s[0] if s else "")[:n]


def load(out_dir):
    """Everything the report needs, keyed by (model, gpus)."""
    res = dict(ddp_tput={}, cbt_tput={}, tta={}, unreadable=[])
    rdir = os.path.join(out_dir, "results")
    for path in sorted(glob.glob(os.path.join(rdir, "mg_ddp_throughput_g*.json"))):
        doc = load_json(path)
        if doc is None:
            res["unreadable"].append(os.path.basename(path))
            continue
        n = doc.get("gpus")
        by_model = {r.get("model"): r for r in doc.get("results", [])}
        for m in doc.get("models") or TPUT_MODELS:
            r = by_model.get(m)
            if r is None:
                why = doc.get("error") or ("killed before it finished (hard time limit)"
                                           if not doc.get("complete") else "no result")
                r = dict(model=m, gpus=n, error=why)
            r["_env"] = doc.get("env", {})
            res["ddp_tput"][(m, n)] = r
    for path in sorted(glob.glob(os.path.join(rdir, "mg_cbtrain_throughput_*_g*.json"))):
        doc = load_json(path)
        mt = re.match(r"mg_cbtrain_throughput_(\w+?)_g(\d+)\.json$", os.path.basename(path))
        if doc is None or not mt:
            res["unreadable"].append(os.path.basename(path))
            continue
        m, n = mt.group(1), int(mt.group(2))
        runs = doc.get("runs", [])
        r = runs[-1] if runs else dict(error="killed before it finished (hard time limit)"
                                       if not doc.get("complete") else "no result")
        res["cbt_tput"][(m, n)] = r
    for path in sorted(glob.glob(os.path.join(rdir, "mg_tta_*_g*_s*.json"))):
        doc = load_json(path)
        mt = re.match(r"mg_tta_(ddp|cbtrain)_(\w+?)_g(\d+)_s(\d+)\.json$", os.path.basename(path))
        if doc is None or not mt:
            res["unreadable"].append(os.path.basename(path))
            continue
        system, m, n = mt.group(1), mt.group(2), int(mt.group(3))
        if not doc.get("complete") and not doc.get("error"):
            doc["error"] = "killed before it finished (hard time limit)"
        res["tta"].setdefault((system, m, n), []).append(doc)
    return res


def skipped_runs(out_dir):
    """Result file name -> the last status line of logs/mg_runs.tsv for it."""
    last = {}
    for line in read_text(os.path.join(out_dir, "logs", "mg_runs.tsv")).splitlines():
        parts = line.split("\t")
        if len(parts) >= 7:
            last[parts[1]] = dict(time=parts[0], status=parts[2], rc=parts[3], seconds=parts[4],
                                  cap=parts[5], nominal=parts[6])
    return last


def ok_tput(r):
    return r is not None and not r.get("error") and num(r.get("images_per_sec"))


def speedup(v, base, n, n0):
    """(speed-up, efficiency) of v on n GPUs over base on n0 GPUs."""
    if num(v) and num(base) and base > 0:
        s = v / base
        return s, s / (n / n0)
    return None, None


def fmt_x(v, digits=2):
    return f"{v:.{digits}f}×" if num(v) else DASH


def fmt_pct(v):
    return f"{100 * v:.0f}%" if num(v) else DASH


def throughput_rows(res, notes):
    """Per model: the Markdown table and the summary rows."""
    lines, summary = [], []
    counts = sorted({k[1] for k in res["ddp_tput"]} | {k[1] for k in res["cbt_tput"]})
    if not counts:
        return ["", "No throughput results."], summary
    for m in TPUT_MODELS:
        if not any(k[0] == m for k in list(res["ddp_tput"]) + list(res["cbt_tput"])):
            continue
        # Speed-ups are over the fewest GPUs of the table; none where that run failed.
        n0 = counts[0]
        d_base = res["ddp_tput"].get((m, n0)) if ok_tput(res["ddp_tput"].get((m, n0))) else None
        c_base = res["cbt_tput"].get((m, n0)) if ok_tput(res["cbt_tput"].get((m, n0))) else None
        rows = []
        for n in counts:
            d, c = res["ddp_tput"].get((m, n)), res["cbt_tput"].get((m, n))
            row = dict(model=m, gpus=n)
            cells = [n]
            if ok_tput(d):
                s, e = speedup(d["images_per_sec"], d_base and d_base["images_per_sec"], n, n0)
                row.update(ddp_images_per_sec=d["images_per_sec"], ddp_speedup=s, ddp_efficiency=e,
                           ddp_base_gpus=n0, ddp_peak_bytes_per_gpu=d.get("peak_bytes_per_gpu"))
                cells += [fmt_ips(d["images_per_sec"]), fmt_x(s), fmt_pct(e)]
            else:
                cells += [notes.ref(f"DDP {m} on {gpus(n)}", d.get("error") or "no result")
                          if d else DASH, DASH, DASH]
            if ok_tput(c):
                k = c.get("learners_per_gpu")
                s, e = speedup(c["images_per_sec"], c_base and c_base["images_per_sec"], n, n0)
                row.update(cbtrain_images_per_sec=c["images_per_sec"], cbtrain_learners_per_gpu=k,
                           cbtrain_speedup=s, cbtrain_efficiency=e, cbtrain_base_gpus=n0)
                cells += [fmt_ips(c["images_per_sec"]) + (f" (K={k})" if k else ""), fmt_x(s),
                          fmt_pct(e)]
            else:
                cells += [notes.ref(f"cbtrain {m} on {gpus(n)}", c.get("error") or "no result")
                          if c else DASH, DASH, DASH]
            ratio = (c["images_per_sec"] / d["images_per_sec"]
                     if ok_tput(c) and ok_tput(d) and d["images_per_sec"] > 0 else None)
            row["cbtrain_over_ddp"] = ratio
            cells.append(fmt_x(ratio))
            rows.append(cells)
            summary.append(row)
        header = ["GPUs", "PyTorch DDP img/s", f"DDP speed-up over {n0}", "DDP efficiency",
                  "cbtrain img/s (K per GPU)", f"cbtrain speed-up over {n0}", "cbtrain efficiency",
                  "cbtrain / DDP"]
        lines += ["", f"### {MODEL_TITLE.get(m, m)}, batch 32 per learner / per GPU", ""]
        lines += table(header, rows)
    return lines, summary


def tta_cell(runs, system, m, n, notes):
    """(seconds cell, epochs cell, median seconds or None, extra dict). cbtrain's seconds
    include its learner search (autotune_seconds: --learners auto searched before its training
    clock started), which the cell names."""
    if not runs:
        return DASH, DASH, None, {}
    reached = [r for r in runs if r.get("reached") and num(r.get("seconds_to_target"))]
    search = [r.get("autotune_seconds") or 0.0 for r in reached]
    secs = [r["seconds_to_target"] + s for r, s in zip(reached, search)]
    eps = [r.get("epochs_to_target") for r in reached]
    best = [max(a for a in r.get("accuracy", []) if num(a)) for r in runs
            if any(num(a) for a in r.get("accuracy", []))]
    trained = [r["train_seconds"] for r in runs if num(r.get("train_seconds"))]
    info = dict(seeds=[r.get("seed") for r in runs], reached=len(reached), runs=len(runs),
                best_accuracy=max(best) if best else None,
                train_seconds_max=max(trained) if trained else None)
    if secs:
        med = statistics.median(secs)
        cell = median_range(secs)
        if any(search):
            cell += f" (search {statistics.median(search):.1f})"
        if len(reached) < len(runs):
            cell += f" ({len(reached)}/{len(runs)} seeds)"
        errs = sorted({first_line(r["error"]) for r in runs if r.get("error")})
        if errs:
            cell += " " + notes.mark(f"{system} {m} on {gpus(n)}", "; ".join(errs))
        info.update(seconds_to_target=med, epochs_to_target=statistics.median(eps),
                    search_seconds=statistics.median(search))
        return cell, f"{statistics.median(eps):g}", med, info
    r = runs[0]
    errs = sorted({first_line(x["error"]) for x in runs if x.get("error")})
    if errs:
        why = "; ".join(errs)
    elif r.get("stopped") == "budget":
        why = (f"not reached within the {r.get('budget_s'):.0f} s cap "
               f"({r.get('epochs')} epochs, best {100 * max(best):.2f}%)" if best and
               num(r.get("budget_s")) else "not reached within the time cap")
    else:
        why = (f"not reached in {r.get('epochs')} of {r.get('max_epochs')} epochs"
               + (f" (best {100 * max(best):.2f}%)" if best else ""))
    return notes.ref(f"{system} {m} on {gpus(n)}", why), DASH, None, info


def tta_rows(res, notes):
    lines, summary = [], []
    counts = sorted({k[2] for k in res["tta"]})
    for m in TTA_MODELS:
        if not any(k[1] == m for k in res["tta"]):
            continue
        target = next((r.get("target") for k, runs in res["tta"].items() if k[1] == m
                       for r in runs if num(r.get("target"))), None)
        rows, base, n0 = [], {}, counts[0]
        for n in counts:
            d_runs = res["tta"].get(("ddp", m, n), [])
            c_runs = res["tta"].get(("cbtrain", m, n), [])
            d_cell, d_ep, d_s, d_info = tta_cell(d_runs, "PyTorch DDP", m, n, notes)
            c_cell, c_ep, c_s, c_info = tta_cell(c_runs, "cbtrain", m, n, notes)
            if n == n0:  # speed-ups over the fewest GPUs; none where that run missed the target
                base = {key: v for key, v in (("ddp", d_s), ("cbt", c_s)) if v is not None}
            d0 = d_runs[0] if d_runs else {}
            c0 = c_runs[0] if c_runs else {}
            ks = sorted({r.get("learners_per_gpu") for r in c_runs if r.get("learners_per_gpu")})
            d_lr = (f"{d0.get('lr_effective'):g} (b={d0.get('global_batch')})"
                    if num(d0.get("lr_effective")) else DASH)
            ratio = c_s / d_s if c_s is not None and d_s else None
            d_up = base["ddp"] / d_s if d_s and "ddp" in base else None
            c_up = base["cbt"] / c_s if c_s and "cbt" in base else None
            rows.append([n, d_lr, d0.get("max_epochs", DASH), d_ep, d_cell, fmt_x(d_up),
                         ", ".join(map(str, ks)) or DASH, c0.get("max_epochs", DASH), c_ep, c_cell,
                         fmt_x(c_up), fmt_x(ratio)])
            summary.append(dict(model=m, gpus=n, target=target, ddp=d_info, cbtrain=c_info,
                                ddp_lr_effective=d0.get("lr_effective"),
                                ddp_max_epochs=d0.get("max_epochs"),
                                cbtrain_learners_per_gpu=ks, cbtrain_lr=c0.get("lr"),
                                cbtrain_max_epochs=c0.get("max_epochs"),
                                ddp_seconds=d_s, cbtrain_seconds=c_s, cbtrain_over_ddp=ratio,
                                ddp_speedup=d_up, cbtrain_speedup=c_up))
        header = ["GPUs", "DDP lr (global batch)", "DDP max epochs", "DDP epochs to target",
                  "DDP seconds", f"DDP speed-up over {n0}", "cbtrain K per GPU",
                  "cbtrain max epochs", "cbtrain epochs to target", "cbtrain seconds",
                  f"cbtrain speed-up over {n0}", "cbtrain / DDP time"]
        t = f" to {100 * target:.0f}%" if num(target) else ""
        lines += ["", f"### {MODEL_TITLE.get(m, m)}{t}", ""] + table(header, rows)
    if not lines:
        lines = ["", "No time-to-accuracy results."]
    return lines, summary


def goals(tput, tta):
    """Rows (goal, measured, met) for issue 9 and issue 5's two-GPU goal."""
    out = []
    for m in TPUT_MODELS:
        rows = [r for r in tput if r["model"] == m and num(r.get("cbtrain_efficiency"))
                and r["gpus"] > r.get("cbtrain_base_gpus", 1)]
        if rows:
            worst = min(rows, key=lambda r: r["cbtrain_efficiency"])
            top = max(rows, key=lambda r: r["gpus"])
            out.append(dict(
                goal=f"{MODEL_TITLE.get(m, m)}: cbtrain throughput ≥ {EFFICIENCY_GOAL} × linear "
                     f"up to {top['gpus']} GPUs",
                measured=", ".join(f"{r['gpus']} GPUs {fmt_x(r['cbtrain_speedup'])} "
                                   f"({fmt_pct(r['cbtrain_efficiency'])})" for r in rows),
                met=worst["cbtrain_efficiency"] >= EFFICIENCY_GOAL))
    for m in TTA_MODELS:
        rows = sorted((r for r in tta if r["model"] == m and r.get("cbtrain_seconds") is not None),
                      key=lambda r: r["gpus"])
        if len(rows) >= 2 and rows[-1]["gpus"] > 2:
            hi, lo = rows[-1], rows[-2]
            out.append(dict(
                goal=f"{MODEL_TITLE.get(m, m)}: cbtrain time to accuracy on {hi['gpus']} GPUs "
                     f"no worse than on {lo['gpus']}",
                measured=f"{hi['cbtrain_seconds']:.1f} s vs {lo['cbtrain_seconds']:.1f} s",
                met=hi["cbtrain_seconds"] <= lo["cbtrain_seconds"]))
        two = next((r for r in tta if r["model"] == m and r["gpus"] == 2), None)
        if two is not None:
            out.append(two_gpu_goal(m, two))
    return out


def two_gpu_goal(m, two):
    """cbtrain's time to the target on two GPUs over DDP's. When DDP did not reach it, its
    training seconds so far bound its time from below."""
    c, d = two.get("cbtrain_seconds"), two.get("ddp_seconds")
    d_lower = two["ddp"].get("train_seconds_max")
    goal = (f"{MODEL_TITLE.get(m, m)}, two GPUs: cbtrain ≤ {TWO_GPU_GOAL} × PyTorch DDP's "
            f"time to the target")
    if num(c) and num(d):
        return dict(goal=goal, measured=f"cbtrain {c:.1f} s vs DDP {d:.1f} s = {c / d:.2f}×",
                    met=c / d <= TWO_GPU_GOAL)
    if num(c) and num(d_lower) and d_lower > 0:
        return dict(goal=goal, measured=f"cbtrain {c:.1f} s; DDP did not reach it in "
                                        f"{d_lower:.1f} s (≤ {c / d_lower:.2f}×)",
                    met=True if c / d_lower <= TWO_GPU_GOAL else None)
    return dict(goal=goal, measured=f"cbtrain {'%.1f s' % c if num(c) else 'did not reach it'}, "
                                    f"DDP {'%.1f s' % d if num(d) else 'did not reach it'}",
                met=False if num(d) else None)


def env_rows(out_dir, res):
    env = os.path.join(out_dir, "env")
    ddp_env = next((r.get("_env") for r in res["ddp_tput"].values() if r.get("_env")), {})
    if not ddp_env:
        ddp_env = next((r.get("env") for runs in res["tta"].values() for r in runs
                        if r.get("env")), {})
    gpus = read_text(os.path.join(env, "mg_nvidia-smi.txt")) or ddp_env.get("gpu", "unknown")
    return [["GPUs (nvidia-smi: index, name, driver, memory)", gpus.replace("\n", "; ")],
            ["Python, PyTorch", read_text(os.path.join(env, "mg_python.txt"), "unknown")
             .replace("\n", "; ")],
            ["cbtrain", read_text(os.path.join(env, "mg_cbtrain_version.txt"), "unknown")
             .replace("\n", "; ")],
            ["git commit", read_text(os.path.join(env, "mg_git.txt"), "unknown").replace("\n", "; ")],
            ["date (UTC) of the last call", read_text(os.path.join(env, "mg_date.txt"), "unknown")],
            ["mode", read_text(os.path.join(env, "mg_mode.txt"), "unknown")],
            ["NCCL_NVLS_ENABLE etc.", ", ".join(f"{k}={ddp_env.get(k)}" for k in
                                                ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST",
                                                 "NVSHMEM_DISABLE_NVLS")) if ddp_env else DASH]]


def runs_section(out_dir, res):
    """Runs skipped for lack of the call's time, which a later call should do."""
    status = skipped_runs(out_dir)
    done = set()
    rdir = os.path.join(out_dir, "results")
    for name in status:
        if os.path.exists(os.path.join(rdir, name)):
            done.add(name)
    missing = [f"`{name}` (cap {s['nominal']} s)" for name, s in sorted(status.items())
               if s["status"] == "skipped-budget" and name not in done]
    lines = []
    if missing:
        lines += ["", "**Not run yet** (the calls' time budgets ran out; run the same command "
                      "again with this OUT_DIR): " + ", ".join(missing) + "."]
    stages = read_text(os.path.join(out_dir, "logs", "mg_stages.txt")).splitlines()
    if stages:
        lines += ["", "Stages (every call): " + "; ".join(stages[-12:]) + "."]
    if res["unreadable"]:
        lines += ["", "Unreadable result files: " + ", ".join(res["unreadable"]) + "."]
    return lines


def report(out_dir):
    res = load(out_dir)
    notes = Notes()
    tput_lines, tput = throughput_rows(res, notes)
    tta_lines, tta = tta_rows(res, notes)
    gl = goals(tput, tta)
    mode = read_text(os.path.join(out_dir, "env", "mg_mode.txt"))
    lines = ["# cbtrain on several GPUs: scaling against PyTorch DDP", ""]
    if mode == "quick":
        lines += ["**Quick run** (short timing windows, few epochs, one seed): a first "
                  "measurement, not figures to quote as final.", ""]
    lines += table(["", "value"], env_rows(out_dir, res))
    lines += ["", "## How it was measured", "",
              "- Same GPUs, same call: for N GPUs, PyTorch uses GPUs 0..N-1 through "
              "`torch.nn.parallel.DistributedDataParallel` (one process per GPU, NCCL, eager "
              "steps), cbtrain uses `--gpus 0,..,N-1` in one process with `--learners auto` "
              "(K learners per GPU, synchronous model averaging across all of them, NCCL "
              "between GPUs). Batch 32 per GPU (DDP) and per learner (cbtrain).",
              "- Throughput: images/s of whole training steps on synthetic data resident on "
              "the GPUs (forward, cross-entropy, backward, SGD momentum 0.9, weight decay 5e-4); "
              "DDP: `bench/torch_ddp.py throughput`, median of timed windows (slowest rank per "
              "window) after warm-up; cbtrain: `cbtrain bench --gpus ... --learners auto "
              "--json`, median of 3 windows. Speed-up = images/s on N GPUs over images/s on "
              "the fewest GPUs measured; efficiency = speed-up / (N / that count).",
              "- Time to accuracy: Fashion-MNIST resident on every GPU, both systems start "
              "from the same ONNX weights (`models/lenet5`, `models/resnet20`); cosine "
              "schedule to 0 over each system's max epochs; test accuracy after every epoch, "
              "off the training clock; the time is training seconds up to the first epoch "
              "at the target. DDP: every rank a disjoint shard of one seeded permutation per "
              "epoch, learning rate = one-GPU rate × N (`DDP_LR_SCALING=linear`). cbtrain: "
              "the same rate per learner at every N, stopped once its metrics reach the "
              "target. Every run has a wall-clock cap (`not reached within ... s`)."]
    lines += ["", "## Throughput scaling"] + tput_lines
    lines += ["", "## Time to accuracy"] + tta_lines
    lines += ["", "## Goals", ""]
    if gl:
        lines += table(["goal", "measured", "met?"],
                       [[g["goal"], g["measured"],
                         {True: "yes", False: "no", None: "not shown"}[g["met"]]] for g in gl])
    else:
        lines += ["Not enough results to judge the goals."]
    cmds = read_text(os.path.join(out_dir, "env", "mg_commands.txt"))
    lines += ["", "## Commands", "", "The driver's calls, in order (OUT_DIR as given then):", "",
              "```sh", cmds or "(no env/mg_commands.txt)", "```"]
    example = next((r.get("cmd") for runs in res["tta"].values() for r in runs if r.get("cmd")), None)
    if example:
        lines += ["", "One run's own command, for example:", "", "```sh", example, "```"]
    topo = re.sub(r"\x1b\[[0-9;]*m", "", read_text(os.path.join(out_dir, "env", "mg_topology.txt")))
    if topo:
        lines += ["", "GPU topology (`nvidia-smi topo -m`):", "", "```", topo, "```"]
    lines += runs_section(out_dir, res)
    lines += notes.markdown()
    path = os.path.join(out_dir, "MULTI_GPU.md")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    summary = dict(throughput=tput, time_to_accuracy=tta, goals=gl, notes=notes.items)
    spath = os.path.join(out_dir, "results", "mg_summary.json")
    os.makedirs(os.path.dirname(spath), exist_ok=True)
    with open(spath, "w") as f:
        json.dump(summary, f, indent=1)
    print(f"wrote {path} and {spath}")
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) == 3 and argv[0] == "--is-done":
        try:
            nominal = float(argv[2])
        except ValueError:
            print(f"--is-done: NOMINAL_CAP_SECONDS must be a number, not '{argv[2]}'", file=sys.stderr)
            return 2
        return 0 if is_done(argv[1], nominal) else 1
    if len(argv) != 1 or argv[0].startswith("-"):
        print("usage: python3 bench/report_multi_gpu.py OUT_DIR\n"
              "       python3 bench/report_multi_gpu.py --is-done RESULT.json NOMINAL_CAP_SECONDS",
              file=sys.stderr)
        return 2
    if not os.path.isdir(argv[0]):
        print(f"{argv[0]}: no such folder", file=sys.stderr)
        return 2
    return report(argv[0])


if __name__ == "__main__":
    sys.exit(main())
