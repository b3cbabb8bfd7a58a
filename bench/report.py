#!/usr/bin/env python3
"""Writes OUT_DIR/BENCHMARKS.md and OUT_DIR/plots/*.png from the benchmark's JSON results.

    python3 bench/report.py OUT_DIR

Reads OUT_DIR/results/*.json (torch_throughput_*.json, cbtrain_throughput_*.json,
tta_*.json, sweep_*.json), OUT_DIR/env/*.txt and OUT_DIR/logs/stages.txt, as written by
bench/run_gpu.sh. Missing or failed entries appear as "—" with the reason in a note.
Needs only the Python standard library; plots need matplotlib (skipped without it).
"""

import glob
import json
import os
import statistics
import sys

MODEL_ORDER = ["lenet5", "resnet32", "resnet20"]
MODEL_TITLE = {"lenet5": "LeNet-5 (1×28×28)", "resnet32": "ResNet-32 (3×32×32)",
               "resnet20": "ResNet-20 (1×28×28)"}
DASH = "—"


class Notes:
    """Numbered failure notes referenced from table cells; one number per distinct reason."""

    def __init__(self):
        self.items = []  # [list of what, reason]
        self.index = {}  # reason -> number

    def ref(self, what, reason):
        """A dash and the number of the note (for a cell without a value)."""
        return f"{DASH} {self.mark(what, reason)}"

    def mark(self, what, reason):
        if reason not in self.index:
            self.items.append([[], reason])
            self.index[reason] = len(self.items)
        n = self.index[reason]
        self.items[n - 1][0].append(what)
        return f"({n})"

    def markdown(self):
        if not self.items:
            return []
        lines = ["", "Notes:", ""]
        lines += [f"({i}) {'; '.join(whats)}: {reason}  "
                  for i, (whats, reason) in enumerate(self.items, 1)]
        return lines + [""]


def read_text(path, default=""):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return default


def model_key(m):
    return (MODEL_ORDER.index(m) if m in MODEL_ORDER else len(MODEL_ORDER), m)


def fmt_ips(v):
    return f"{v:,.0f}" if isinstance(v, (int, float)) else DASH


def fmt_mib(b):
    return f"{b / 2**20:,.1f}" if isinstance(b, (int, float)) else DASH


def fmt_ratio(a, b):
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b > 0:
        return f"{a / b:.2f}×"
    return DASH


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


def load(out_dir):
    res = dict(torch_tput=[], torch_env={}, torch_meta={}, cbt_tput=[], cbt_meta={}, tta=[],
               sweep=[], unreadable=[])
    for path in sorted(glob.glob(os.path.join(out_dir, "results", "*.json"))):
        name = os.path.basename(path)
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            res["unreadable"].append(f"{name}: {e}")
            continue
        if name.startswith("torch_throughput"):
            res["torch_tput"] += doc.get("results", [])
            res["torch_env"] = doc.get("env", res["torch_env"])
            res["torch_meta"][doc.get("model")] = {k: doc.get(k) for k in
                                                   ("steps_per_window", "windows", "warmup_steps",
                                                    "quick", "memory_method")}
        elif name.startswith("cbtrain_throughput"):
            res["cbt_tput"] += doc.get("runs", [])
            res["cbt_meta"] = {k: doc.get(k) for k in ("steps", "warmup")}
        elif name.startswith("tta_"):
            doc["_file"] = name
            res["tta"].append(doc)
        elif name.startswith("sweep_"):
            doc["_file"] = name
            res["sweep"].append(doc)
    return res


def torch_lookup(recs):
    """(model, batch, mode, k) -> record."""
    return {(r.get("model"), r.get("batch"), r.get("mode"), r.get("k")): r for r in recs}


def cbt_lookup(recs):
    """(model, batch, requested learners as str) -> record."""
    return {(r.get("model"), r.get("batch"), str(r.get("learners_requested"))): r for r in recs}


def ok(r):
    return r is not None and not r.get("error") and isinstance(r.get("images_per_sec"), (int, float))


def cell(r, notes, what, extra=""):
    if r is None:
        return DASH
    if not ok(r):
        return notes.ref(what, r.get("error") or "no result")
    return fmt_ips(r["images_per_sec"]) + extra


def throughput_section(res, notes):
    tl, cl = torch_lookup(res["torch_tput"]), cbt_lookup(res["cbt_tput"])
    models = sorted({k[0] for k in tl} | {k[0] for k in cl}, key=model_key)
    lines, summary = [], {}
    for m in models:
        batches = sorted({k[1] for k in tl if k[0] == m} | {k[1] for k in cl if k[0] == m})
        ks = sorted({k[3] for k in tl if k[0] == m and k[2] == "multistream"})
        cks = sorted({k[2] for k in cl if k[0] == m},
                     key=lambda s: (not s.isdigit(), int(s) if s.isdigit() else 0))
        lines += ["", f"### {MODEL_TITLE.get(m, m)}", ""]
        lines += ["Images per second of a training step; PyTorch per mode, cbtrain per number of "
                  "learners K (\"auto\": the auto-tuner's choice).", ""]
        has_torch = any(k[0] == m and k[2] in ("eager", "graph") for k in tl)
        header = (["batch"] + (["PyTorch eager", "PyTorch graph"] if has_torch else []) +
                  [f"PyTorch {k} streams" for k in ks] +
                  [f"cbtrain K={k}" if k != "auto" else "cbtrain auto" for k in cks])
        rows = []
        for b in batches:
            row = [b]
            if has_torch:
                row += [cell(tl.get((m, b, "eager", 1)), notes, f"PyTorch {m} b={b} eager"),
                        cell(tl.get((m, b, "graph", 1)), notes, f"PyTorch {m} b={b} graph")]
            row += [cell(tl.get((m, b, "multistream", k)), notes,
                         f"PyTorch {m} b={b} {k} streams") for k in ks]
            for k in cks:
                r = cl.get((m, b, k))
                extra = f" (K={r.get('learners')})" if k == "auto" and ok(r) else ""
                row.append(cell(r, notes, f"cbtrain {m} b={b} K={k}", extra))
            rows.append(row)
            # Best of each system for the summary.
            t_ok = [r for key, r in tl.items() if key[0] == m and key[1] == b and ok(r)]
            c_ok = [r for key, r in cl.items() if key[0] == m and key[1] == b and ok(r)]
            summary[(m, b)] = dict(
                eager=tl.get((m, b, "eager", 1)),
                torch_best=max(t_ok, key=lambda r: r["images_per_sec"]) if t_ok else None,
                cbt_best=max(c_ok, key=lambda r: r["images_per_sec"]) if c_ok else None)
        lines += table(header, rows)
    return lines, summary


def summary_section(summary):
    rows = []
    for (m, b), s in sorted(summary.items(), key=lambda kv: (model_key(kv[0][0]), kv[0][1])):
        e, t, c = s["eager"], s["torch_best"], s["cbt_best"]
        e_ips = e["images_per_sec"] if ok(e) else None
        t_ips = t["images_per_sec"] if t else None
        c_ips = c["images_per_sec"] if c else None
        t_how = ""
        if t:
            t_how = f" ({t['mode']}{', K=' + str(t['k']) if t['mode'] == 'multistream' else ''})"
        c_how = f" (K={c.get('learners')})" if c else ""
        rows.append([MODEL_TITLE.get(m, m), b, fmt_ips(e_ips), fmt_ips(t_ips) + t_how,
                     fmt_ips(c_ips) + c_how, fmt_ratio(c_ips, t_ips), fmt_ratio(c_ips, e_ips)])
    header = ["model", "batch", "PyTorch eager", "PyTorch best (mode)", "cbtrain best (K)",
              "cbtrain best / PyTorch best", "cbtrain best / PyTorch eager"]
    return table(header, rows)


def memory_section(res, notes):
    tl, cl = torch_lookup(res["torch_tput"]), cbt_lookup(res["cbt_tput"])
    keys = sorted({(k[0], k[1]) for k in tl} | {(k[0], k[1]) for k in cl},
                  key=lambda mb: (model_key(mb[0]), mb[1]))
    rows = []
    for m, b in keys:
        e, g, c1 = tl.get((m, b, "eager", 1)), tl.get((m, b, "graph", 1)), cl.get((m, b, "1"))
        c_ok = [r for key, r in cl.items() if key[0] == m and key[1] == b and ok(r)
                and isinstance(r.get("learners"), int)]
        cmax = max(c_ok, key=lambda r: r["learners"]) if c_ok else None

        def mem(r, key, what):
            if r is None:
                return DASH, None
            if not ok(r) or not isinstance(r.get(key), (int, float)):
                return notes.ref(what, r.get("error") or f"no {key}"), None
            return fmt_mib(r[key]), r[key]

        e_s, e_b = mem(e, "peak_bytes", f"PyTorch {m} b={b} eager memory")
        g_s, _ = mem(g, "peak_bytes", f"PyTorch {m} b={b} graph memory")
        w_s = fmt_mib(e.get("cublas_workspace_bytes")) if ok(e) else DASH
        c_s, c_b = mem(c1, "peak_bytes_per_learner", f"cbtrain {m} b={b} K=1 memory")
        cm_s = DASH
        if cmax is not None and isinstance(cmax.get("peak_bytes_per_learner"), (int, float)):
            cm_s = f"{fmt_mib(cmax['peak_bytes_per_learner'])} (K={cmax['learners']})"
        rows.append([MODEL_TITLE.get(m, m), b, e_s, w_s, g_s, c_s, cm_s, fmt_ratio(c_b, e_b)])
    header = ["model", "batch", "PyTorch eager peak", "of which cuBLAS workspaces (freed after the run)",
              "PyTorch graph peak",
              "cbtrain per learner, K=1", "cbtrain per learner, largest K",
              "cbtrain K=1 / PyTorch eager"]
    return table(header, rows)


def tta_groups(runs):
    groups = {}
    for r in runs:
        key = (r.get("tool"), r.get("model"), r.get("batch"), str(r.get("learners")),
               r.get("target"))
        groups.setdefault(key, []).append(r)
    return dict(sorted(groups.items(), key=lambda kv: (model_key(str(kv[0][1])), kv[0][0] != "torch",
                                                       kv[0][2] or 0, kv[0][3])))


def tta_section(res, notes):
    rows = []
    for (tool, m, b, k, target), runs in tta_groups(res["tta"]).items():
        runs = sorted(runs, key=lambda r: r.get("seed", 0))
        system = "PyTorch eager" if tool == "torch" else "cbtrain"
        reached = [r for r in runs if r.get("reached")]
        errs = [r for r in runs if r.get("error")]
        ep = [r["epochs_to_target"] for r in reached]
        secs = [r["seconds_to_target"] for r in reached]
        # What cbtrain's learner search spends before its training clock starts (tuning while
        # training: the build of its trainer; --autotune-when before: the whole search); PyTorch
        # has none (its cuDNN benchmark searches run inside its first epoch).
        search = [r.get("autotune_seconds") or 0.0 for r in reached]
        with_search = [a + b for a, b in zip(secs, search)]
        best = [max(a for a in r.get("accuracy", []) if a is not None)
                for r in runs if any(a is not None for a in r.get("accuracy", []))]
        if secs:
            sec_s, all_s = median_range(secs), median_range(with_search)
            search_s = median_range(search) if tool != "torch" else DASH
            ep_s = f"{statistics.median(ep):g} ({', '.join(str(e) for e in ep)})"
        else:
            why = "; ".join(sorted({r["error"] for r in errs})) if errs else \
                f"target not reached in {runs[0].get('max_epochs')} epochs"
            sec_s = notes.ref(f"{system} {m} b={b} to {target}", why)
            ep_s = search_s = all_s = DASH
        if errs and secs:
            sec_s += " " + notes.mark(f"{system} {m} b={b}",
                                      "; ".join(sorted({r["error"] for r in errs})))
        lr = runs[0].get("lr")
        chosen = sorted({str(r["learners_chosen"]) for r in runs if r.get("learners_chosen")})
        if chosen:
            k += f" (K={', '.join(chosen)})"
        rows.append([system, MODEL_TITLE.get(m, m), b, k, f"{lr:g} {runs[0].get('schedule', '')}"
                     if isinstance(lr, (int, float)) else DASH,
                     f"{100 * target:.0f}%" if isinstance(target, (int, float)) else DASH,
                     ", ".join(str(r.get("seed")) for r in runs),
                     f"{len(reached)}/{len(runs)}", ep_s, sec_s, search_s, all_s,
                     f"{100 * max(best):.2f}%" if best else DASH])
    header = ["system", "model", "batch", "learners", "lr, schedule", "target", "seeds",
              "reached", "epochs to target: median (per seed)",
              "training seconds to target: median [range]", "learner search seconds",
              "seconds to target with the search", "best test accuracy"]
    return table(header, rows)


# The single-GPU goals of issue 5 that the driver's results decide. Throughput: cbtrain's best
# at batch 32 a learner over the best PyTorch configuration, at least THROUGHPUT_GOAL. Time to
# accuracy: cbtrain's seconds (its learner search's time before training added) over PyTorch's
# at most the bound, against PyTorch eager at batch 32 (LeNet-5) or the better of its batches
# (ResNet-20). Memory: cbtrain's peak per learner at most PyTorch's for one replica.
THROUGHPUT_GOAL = 1.5
GOAL_BATCH = 32
TTA_GOALS = (("lenet5", 0.90, 0.1, (32,)), ("resnet20", 0.91, 0.25, None))


def tta_median(runs, with_search):
    """Median seconds to the target over the runs that reached it (None when none did)."""
    secs = [r["seconds_to_target"] + ((r.get("autotune_seconds") or 0.0) if with_search else 0.0)
            for r in runs if r.get("reached") and isinstance(r.get("seconds_to_target"), (int, float))]
    return statistics.median(secs) if secs else None


def seeds_reached(runs):
    return sum(1 for r in runs if r.get("reached")), len(runs)


def goals_section(res, summary):
    """The goals table: what was measured, the ratio and whether the goal is met."""
    rows = []
    for m in ("lenet5", "resnet32"):
        s = summary.get((m, GOAL_BATCH))
        t, c = (s["torch_best"], s["cbt_best"]) if s else (None, None)
        what = f"{MODEL_TITLE.get(m, m)} at batch {GOAL_BATCH} a learner: cbtrain's best ≥ {THROUGHPUT_GOAL:g}× PyTorch's best"
        if not (t and c):
            rows.append([what, "no result for both systems", DASH])
            continue
        ratio = c["images_per_sec"] / t["images_per_sec"]
        mode = f"{t['mode']}, K={t['k']}" if t["mode"] == "multistream" else t["mode"]
        need = THROUGHPUT_GOAL * t["images_per_sec"]
        verdict = "yes" if ratio >= THROUGHPUT_GOAL else \
            f"no: needs {need:,.0f} img/s, {100 * (need / c['images_per_sec'] - 1):.1f}% more"
        rows.append([what, f"{fmt_ips(c['images_per_sec'])} (K={c.get('learners')}) vs "
                           f"{fmt_ips(t['images_per_sec'])} ({mode}) = **{ratio:.2f}×**", verdict])
    groups = tta_groups(res["tta"])
    for m, target, bound, torch_batches in TTA_GOALS:
        title = MODEL_TITLE.get(m, m)
        against = "PyTorch eager at batch 32" if torch_batches else "the better PyTorch batch"
        what = f"{title} to {100 * target:.0f}%: cbtrain ≤ {bound:g}× the time of {against}"
        cbt = [r for (tool, mm, _, _, tg), runs in groups.items() if tool == "cbtrain" and mm == m
               and tg == target for r in runs]
        torch = {}
        for (tool, mm, b, _, tg), runs in groups.items():
            if tool == "torch" and mm == m and tg == target and (torch_batches is None or b in torch_batches):
                t_med = tta_median(runs, False)
                if t_med is not None:
                    torch[b] = (t_med, runs)
        c_s = tta_median(cbt, True)
        if c_s is None or not torch:
            rows.append([what, "no time for both systems", DASH])
            continue
        b_best = min(torch, key=lambda b: torch[b][0])
        t_s, t_runs = torch[b_best]
        ratio = c_s / t_s
        (ck, cn), (tk, tn) = seeds_reached(cbt), seeds_reached(t_runs)
        if ratio > bound:
            verdict = f"no, by {ratio / bound:.1f}×"
        elif ck < cn:
            verdict = f"on {ck} of {cn} seeds"
        else:
            verdict = "yes"
        rows.append([what, f"{c_s:.1f} s ({ck}/{cn} seeds reached) vs {t_s:.1f} s at batch {b_best} "
                           f"({tk}/{tn}) = **{ratio:.3f}×**", verdict])
    tl, cl = torch_lookup(res["torch_tput"]), cbt_lookup(res["cbt_tput"])
    ratios = []
    for (m, b, mode, k), e in tl.items():
        c1 = cl.get((m, b, "1"))
        if mode == "eager" and ok(e) and ok(c1) and isinstance(e.get("peak_bytes"), (int, float)) \
                and isinstance(c1.get("peak_bytes_per_learner"), (int, float)) and e["peak_bytes"] > 0:
            ratios.append(c1["peak_bytes_per_learner"] / e["peak_bytes"])
    what = "peak GPU memory per learner ≤ PyTorch's for one replica"
    if ratios:
        rows.append([what, f"{min(ratios):.2f}–{max(ratios):.2f}× over {len(ratios)} model and batch pairs",
                     "yes" if max(ratios) <= 1.0 else "no"])
    else:
        rows.append([what, "no result for both systems", DASH])
    return table(["goal (one GPU)", "measured", "met?"], rows)


def median_range(xs):
    """'m' for one value, 'm [lo–hi]' for several."""
    s = f"{statistics.median(xs):.1f}"
    return s + (f" [{min(xs):.1f}–{max(xs):.1f}]" if len(xs) > 1 else "")


def sweep_section(res, notes):
    """One table per system and setting: a row per learning rate, the fastest marked."""
    lines = []
    for (tool, m, b, k, target), runs in tta_groups(res["sweep"]).items():
        runs = sorted(runs, key=lambda r: (str(r.get("schedule")), r.get("lr") or 0, r.get("seed", 0)))
        mixed = len({r.get("schedule") for r in runs}) > 1
        system = "PyTorch eager" if tool == "torch" else "cbtrain"
        reached = [r for r in runs if r.get("reached") and
                   isinstance(r.get("seconds_to_target"), (int, float))]
        fastest = min(reached, key=lambda r: r["seconds_to_target"]) if reached else None
        epochs = sorted({str(r.get("max_epochs")) for r in runs})
        chosen = sorted({str(r["learners_chosen"]) for r in runs if r.get("learners_chosen")})
        lines += ["", f"### {system}, {MODEL_TITLE.get(m, m)}, batch {b}"
                  + (f", learners {k}" + (f" (K={', '.join(chosen)})" if chosen else "")
                     if tool != "torch" else "")
                  + (f", to {100 * target:.0f}%" if isinstance(target, (int, float)) else "")
                  + f", {'/'.join(sorted({str(r.get('schedule')) for r in runs}))} over "
                  + f"{'/'.join(epochs)} epochs, seed "
                  + ", ".join(sorted({str(r.get("seed")) for r in runs})), ""]
        rows = []
        for r in runs:
            lr = r.get("lr")
            lr_s = f"{lr:g}" if isinstance(lr, (int, float)) else DASH
            what = f"{system} {m} b={b} lr={lr_s}"
            if mixed:
                lr_s += f" {r.get('schedule')}"
            if r is fastest:
                lr_s = f"**{lr_s}** (fastest)"
            best = [a for a in r.get("accuracy", []) if a is not None]
            if r in reached:
                ep_s, sec_s = str(r.get("epochs_to_target")), f"{r['seconds_to_target']:.1f}"
                if r.get("error"):
                    sec_s += " " + notes.mark(what, r["error"])
            else:
                ep_s = DASH
                sec_s = notes.ref(what, r["error"]) if r.get("error") else DASH
            rows.append([lr_s, "yes" if r.get("reached") else "no", ep_s, sec_s,
                         f"{100 * max(best):.2f}%" if best else DASH])
        lines += table(["lr", "reached", "epochs to target", "training seconds to target",
                        "best test accuracy"], rows)
        if fastest is None:
            lines += ["", f"No learning rate reached the target in {'/'.join(epochs)} epochs."]
    return lines


def accuracy_curve(run):
    """(seconds, test accuracy) after each epoch of a time-to-accuracy run. cbtrain's seconds
    start after the part of its learner search (--learners auto) that runs before training, so
    its curve is shifted by those seconds: the x axis is the time from the start of training,
    search included, on both sides (PyTorch's cuDNN searches are inside its first epoch)."""
    shift = run.get("autotune_seconds") or 0.0
    return [(x + shift, y) for x, y in zip(run.get("elapsed_s", []), run.get("accuracy", []))
            if x is not None and y is not None]


def plots(res, out_dir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return [], "matplotlib not available: no plots"
    pdir = os.path.join(out_dir, "plots")
    os.makedirs(pdir, exist_ok=True)
    made = []
    tl, cl = torch_lookup(res["torch_tput"]), cbt_lookup(res["cbt_tput"])
    models = sorted({k[0] for k in tl} | {k[0] for k in cl}, key=model_key)
    for m in models:
        batches = sorted({k[1] for k in tl if k[0] == m} | {k[1] for k in cl if k[0] == m})
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for i, b in enumerate(batches):
            color = f"C{i}"
            # cbtrain: fixed K as a line, auto as a star at the K it chose.
            pts = sorted((r["learners"], r["images_per_sec"]) for key, r in cl.items()
                         if key[0] == m and key[1] == b and key[2] != "auto" and ok(r)
                         and isinstance(r.get("learners"), int))
            if pts:
                ax.plot(*zip(*pts), "-o", color=color, label=f"cbtrain b={b}")
            a = cl.get((m, b, "auto"))
            if ok(a) and isinstance(a.get("learners"), int):
                ax.plot([a["learners"]], [a["images_per_sec"]], "*", color=color, markersize=14,
                        label=f"cbtrain auto b={b}")
            # PyTorch: one graph (K=1) and K graphs on K streams; eager as a cross at K=1.
            tp = []
            g = tl.get((m, b, "graph", 1))
            if ok(g):
                tp.append((1, g["images_per_sec"]))
            tp += sorted((key[3], r["images_per_sec"]) for key, r in tl.items()
                         if key[0] == m and key[1] == b and key[2] == "multistream" and ok(r))
            if tp:
                ax.plot(*zip(*tp), "--s", color=color, alpha=0.7, label=f"PyTorch graphs b={b}")
            e = tl.get((m, b, "eager", 1))
            if ok(e):
                ax.plot([1], [e["images_per_sec"]], "x", color=color, markersize=9,
                        label=f"PyTorch eager b={b}")
        if not ax.get_legend_handles_labels()[0]:
            plt.close(fig)
            continue
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("learners / replicas K on one GPU")
        ax.set_ylabel("images per second")
        ax.set_title(f"{MODEL_TITLE.get(m, m)}: training throughput")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
        fig.tight_layout()
        name = f"throughput_{m}.png"
        fig.savefig(os.path.join(pdir, name), dpi=110)
        plt.close(fig)
        made.append(name)
    by_model = {}
    for r in res["tta"]:
        by_model.setdefault(r.get("model"), []).append(r)
    for m in sorted(by_model, key=lambda x: model_key(str(x))):
        fig, ax = plt.subplots(figsize=(7, 4.5))
        configs = sorted({(r.get("tool"), r.get("batch"), str(r.get("learners")))
                          for r in by_model[m]}, key=str)
        for i, cfg in enumerate(configs):
            first = True
            for r in sorted(by_model[m], key=lambda r: r.get("seed", 0)):
                if (r.get("tool"), r.get("batch"), str(r.get("learners"))) != cfg:
                    continue
                xy = accuracy_curve(r)
                if not xy:
                    continue
                tool = "PyTorch eager" if cfg[0] == "torch" else "cbtrain"
                label = f"{tool} b={cfg[1]}" + (f" K={cfg[2]}" if cfg[0] != "torch" else "")
                ax.plot(*zip(*xy), "-o", color=f"C{i}", markersize=3,
                        label=label if first else None, alpha=0.8)
                first = False
        targets = sorted({r.get("target") for r in by_model[m]
                          if isinstance(r.get("target"), (int, float))})
        for t in targets:
            ax.axhline(t, color="gray", linestyle=":", linewidth=1)
        ax.set_xlabel("seconds: training, and what cbtrain's learner search spends before it (evaluation excluded)")
        ax.set_ylabel("test accuracy")
        ax.set_title(f"{MODEL_TITLE.get(m, m)} on Fashion-MNIST: accuracy vs time")
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
        fig.tight_layout()
        name = f"accuracy_{m}.png"
        fig.savefig(os.path.join(pdir, name), dpi=110)
        plt.close(fig)
        made.append(name)
    return made, ""


def env_section(res, out_dir):
    env = os.path.join(out_dir, "env")
    te = res["torch_env"]
    gpu = read_text(os.path.join(env, "nvidia-smi.txt")) or te.get("gpu", "unknown")
    rows = [["GPU (nvidia-smi: name, driver, memory)", gpu.replace("\n", "; ")],
            ["PyTorch", read_text(os.path.join(env, "python.txt")).replace("\n", "; ") or
             (f"torch {te.get('torch')}, CUDA {te.get('cuda')}, cuDNN {te.get('cudnn')}"
              if te else "unknown")],
            ["cbtrain", read_text(os.path.join(env, "cbtrain_version.txt"), "unknown")
             .replace("\n", "; ")],
            ["git commit", read_text(os.path.join(env, "git.txt"), "unknown").replace("\n", "; ")],
            ["date (UTC)", read_text(os.path.join(env, "date.txt"), "unknown")],
            ["mode", read_text(os.path.join(env, "mode.txt"), "unknown")],
            ["CUDA_DEVICE_MAX_CONNECTIONS (both systems)",
             read_text(os.path.join(env, "cuda_device_max_connections.txt"), "driver default (8)")]]
    return table(["", "value"], rows)


def stages_section(out_dir):
    last = {}
    for line in read_text(os.path.join(out_dir, "logs", "stages.txt")).splitlines():
        parts = line.split()
        if parts:
            last[parts[0]] = " ".join(parts[1:])
    if not last:
        return []
    return ["", "## Stages of the last run", ""] + table(
        ["stage", "result"], [[k, v] for k, v in last.items()])


def main():
    if len(sys.argv) != 2:
        print("usage: python3 bench/report.py OUT_DIR", file=sys.stderr)
        return 2
    out_dir = sys.argv[1]
    res = load(out_dir)
    notes = Notes()
    mode = read_text(os.path.join(out_dir, "env", "mode.txt"))

    lines = ["# cbtrain benchmarks: PyTorch and cbtrain side by side on one GPU", ""]
    if mode == "quick":
        lines += ["**Quick run** (short timing windows, few epochs, one seed): a smoke test, "
                  "not figures to quote.", ""]
    lines += env_section(res, out_dir)
    precision = read_text(os.path.join(out_dir, "env", "precision.txt")) or "fp32"
    cbt_precision = read_text(os.path.join(out_dir, "env", "cbtrain_precision.txt")) or precision
    if cbt_precision != precision:  # CBT_PRECISION: cbtrain's own, PyTorch at PRECISION
        lines += ["", f"Precision: PyTorch **{precision}**, cbtrain **`--precision {cbt_precision}`** "
                  "(run_gpu.sh's CBT_PRECISION)."]
    else:
        lines += ["", f"Precision: **{precision}** on both sides ("
                  + ("TF32 tensor cores off in PyTorch's cuDNN and cuBLAS, cbtrain's default "
                     "`--precision fp32`" if precision == "fp32" else
                     "PyTorch with `allow_tf32` for cuDNN and cuBLAS, cbtrain `--precision tf32`")
                  + ")."]
    tm = res["torch_meta"]
    cm = res["cbt_meta"]
    tput, summary = throughput_section(res, notes)
    lines += ["", "## Goals", "",
              "Issue 5's single-GPU goals as this run measured them (time to accuracy: the median "
              "over the seeds that reached the target, cbtrain's learner search before training "
              "included). The two-GPU and CPU goals have drivers of their own.", ""]
    lines += goals_section(res, summary)
    lines += ["", "## How it was measured", "",
              "- Training step = forward, softmax cross-entropy, backward, SGD with momentum 0.9 "
              "update, float32, synthetic data resident on the GPU.",
              "- PyTorch: `bench/torch_throughput.py` (cuDNN benchmark mode); *eager* = plain "
              "PyTorch calls; *graph* = the whole step captured as one CUDA graph; *K streams* "
              "= K replicas, each its own model, optimizer and graph, replayed on its own "
              "stream. Median images/s over timing windows "
              + ", ".join(f"{m}: {v.get('windows')}×{v.get('steps_per_window')} steps"
                          for m, v in sorted(tm.items(), key=lambda kv: model_key(str(kv[0]))))
              + ".",
              f"- cbtrain: `cbtrain bench MODEL --device cuda --batch-size B --learners K "
              f"--json` ({cm.get('steps', '?')} steps after {cm.get('warmup', '?')} warm-up "
              f"steps, last run's settings), K learners of batch B each: images/s = K·B per "
              f"round.",
              "- Memory: PyTorch peak = `torch.cuda.max_memory_allocated()` for one replica "
              "(model, gradients, momentum, batch, activations, cuDNN and cuBLAS workspaces) "
              "over warm-up and timing, minus the value before the replica was built ("
              + ("; ".join(sorted({str(v["memory_method"]) for v in tm.values()
                                   if v.get("memory_method")}))
                 or ("results without memory_method: cuBLAS workspaces made by earlier "
                     "runs were in that value, not in the peak" if tm else "no results"))
              + "); cbtrain = its reported peak bytes per learner, its cuBLAS workspace "
              "included.",
              "- Time to accuracy: Fashion-MNIST, whole data set on the GPU, test accuracy after "
              "every epoch; the training clock counts training only. cbtrain's learner search "
              "(--learners auto) times its counts on its first training rounds, on the clock; "
              "what it spends before the clock starts (building the trainer of the largest "
              "count; with --autotune-when before, the whole search) has a column of "
              "its own and is added in the next one (PyTorch's cuDNN benchmark searches run "
              "inside its first epoch, on its clock). Both systems start from the same "
              "exported ONNX weights; seeds change the data order. PyTorch stops at the first "
              "epoch reaching the target, cbtrain runs all its epochs and the first epoch at "
              "the target is read from its metrics."]
    lines += ["", "## Throughput"]
    lines += tput
    lines += ["", "## cbtrain best vs PyTorch best", ""] + summary_section(summary)
    lines += ["", "## Peak GPU memory per learner (MiB)", ""] + memory_section(res, notes)
    lines += ["", "## Time to accuracy (Fashion-MNIST)", ""] + tta_section(res, notes)
    if res["sweep"]:
        lines += ["", "## Learning-rate sweep (time to accuracy)", "",
                  "Stage `lr_sweep` of `bench/run_gpu.sh`: each system at its batch of the "
                  "time-to-accuracy runs, one seed, several learning rates; the cosine schedule "
                  "spans the maximum epochs on both sides (PyTorch stops at the target, cbtrain "
                  "runs them all). Fastest = fewest training seconds to the target."]
        lines += sweep_section(res, notes)
    made, why = plots(res, out_dir)
    lines += ["", "## Plots", ""]
    lines += [f"![{p}](plots/{p})" for p in made] or [why or "no data to plot"]
    lines += stages_section(out_dir)
    if res["unreadable"]:
        lines += ["", "Unreadable result files: " + "; ".join(res["unreadable"])]
    lines += notes.markdown()
    path = os.path.join(out_dir, "BENCHMARKS.md")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {path}" + (f" and {len(made)} plots" if made else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
