#!/usr/bin/env python3
"""Tests of bench/report.py's learning-rate sweep and memory tables on fabricated results
(random figures; neither a GPU nor PyTorch).

    python3 -m unittest discover -s bench -p 'test_*.py'
"""

import json
import os
import random
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import report  # noqa: E402

MIB = 1048576.0


def dump(doc, path):
    with open(path, "w") as f:
        json.dump(doc, f)


def sweep_run(tool, model, batch, lr, schedule, seconds, target=0.91):
    reached = seconds is not None
    return dict(tool=tool, model=model, batch=batch, learners="auto" if tool == "cbtrain" else 1,
                lr=lr, schedule=schedule, target=target, max_epochs=15, seed=1,
                reached=reached, seconds_to_target=seconds,
                epochs_to_target=random.randint(2, 9) if reached else None,
                accuracy=[0.8, target + 0.004 if reached else target - 0.01], error=None)


def rows_of(lines, title_part):
    """The data rows of the first table after the heading that contains title_part."""
    start = next(i for i, line in enumerate(lines) if line.startswith("###") and title_part in line)
    rows = []
    for line in lines[start + 1:]:
        if line.startswith("###"):
            break
        if line.startswith("| ") and not line.startswith("| lr |") and not line.startswith("|---"):
            rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows


class Sweep(unittest.TestCase):
    def test_the_fastest_rate_of_each_system_is_marked_and_misses_say_no(self):
        rng = random.Random(11)
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, "results"))
            want = {}
            for tool, batch, lrs in (("torch", 256, [0.02, 0.05, 0.1, 0.4]),
                                     ("cbtrain", 32, [0.02, 0.05, 0.2])):
                secs = {lr: rng.uniform(5, 30) for lr in lrs}
                missed = lrs[-1]
                secs[missed] = None  # this rate does not reach the target
                want[tool] = (min((s, lr) for lr, s in secs.items() if s is not None)[1], missed)
                for lr, s in secs.items():
                    dump(sweep_run(tool, "resnet20", batch, lr, "cosine", s),
                         os.path.join(root, "results", f"sweep_{tool}_resnet20_b{batch}_lr{lr}_s1.json"))
            lines = report.sweep_section(report.load(root), report.Notes())
            for tool, title in (("torch", "PyTorch eager"), ("cbtrain", "cbtrain,")):
                rows = rows_of(lines, title)
                fastest, missed = want[tool]
                marked = [r for r in rows if "(fastest)" in r[0]]
                self.assertEqual(len(marked), 1, rows)
                self.assertEqual(marked[0][0], f"**{fastest:g}** (fastest)")
                miss = next(r for r in rows if r[0] == f"{missed:g}")
                self.assertEqual(miss[1], "no")
                self.assertEqual(len(rows), 4 if tool == "torch" else 3)

    def test_mixed_schedules_name_the_schedule_in_each_row(self):
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, "results"))
            for sched, lr, s in (("constant", 0.02, 9.5), ("cosine", 0.05, 4.25), ("cosine", 0.02, None)):
                dump(sweep_run("cbtrain", "lenet5", 32, lr, sched, s, target=0.90),
                     os.path.join(root, "results", f"sweep_cbtrain_lenet5_b32_kauto_{sched}_lr{lr}_s1.json"))
            lines = report.sweep_section(report.load(root), report.Notes())
            rows = rows_of(lines, "cbtrain,")
            self.assertEqual(sorted(r[0] for r in rows),
                             sorted(["0.02 constant", "**0.05 cosine** (fastest)", "0.02 cosine"]))
            self.assertIn("4.2", next(r for r in rows if "fastest" in r[0])[3])

    def test_no_sweep_files_give_no_section(self):
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, "results"))
            self.assertEqual(report.sweep_section(report.load(root), report.Notes()), [])


class TimeToAccuracy(unittest.TestCase):
    def test_cbtrains_learner_search_is_shown_and_added_to_its_seconds(self):
        rng = random.Random(5)
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, "results"))
            train, search = [rng.uniform(5, 9) for _ in range(3)], [rng.uniform(10, 20) for _ in range(3)]
            for seed in (1, 2, 3):
                run = sweep_run("cbtrain", "resnet20", 32, 0.05, "cosine", train[seed - 1])
                run.update(seed=seed, autotune_seconds=search[seed - 1])
                dump(run, os.path.join(root, "results", f"tta_cbtrain_resnet20_b32_kauto_s{seed}.json"))
            torch_s = rng.uniform(8, 12)
            dump(sweep_run("torch", "resnet20", 256, 0.05, "cosine", torch_s),
                 os.path.join(root, "results", "tta_torch_resnet20_b256_s1.json"))
            lines = report.tta_section(report.load(root), report.Notes())
            header = [c.strip() for c in lines[0].strip("|").split("|")]
            rows = {r[0]: r for r in ([c.strip() for c in line.strip("|").split("|")] for line in lines[2:])}
            col = header.index("learner search seconds")
            both = header.index("seconds to target with the search")
            cbt, torch = rows["cbtrain"], rows["PyTorch eager"]
            with_search = sorted(a + b for a, b in zip(train, search))
            self.assertEqual(cbt[col].split()[0], f"{sorted(search)[1]:.1f}")
            self.assertEqual(cbt[both], f"{with_search[1]:.1f} [{with_search[0]:.1f}–{with_search[2]:.1f}]")
            self.assertEqual(cbt[both - 2].split()[0], f"{sorted(train)[1]:.1f}")
            self.assertEqual(torch[col], report.DASH)
            self.assertEqual(torch[both], f"{torch_s:.1f}")


class AccuracyCurve(unittest.TestCase):
    def test_cbtrains_curve_starts_after_its_search_and_pytorchs_is_as_measured(self):
        rng = random.Random(11)
        elapsed = sorted(rng.uniform(0.1, 9) for _ in range(6))
        acc = [rng.uniform(0.5, 0.95) for _ in elapsed]
        search = rng.uniform(3, 20)
        cbt = dict(tool="cbtrain", elapsed_s=elapsed + [None], accuracy=acc + [0.9], autotune_seconds=search)
        curve = report.accuracy_curve(cbt)
        self.assertEqual(len(curve), len(elapsed))  # the epoch without a time is left out
        for (x, y), e, a in zip(curve, elapsed, acc):
            self.assertAlmostEqual(x, e + search)
            self.assertEqual(y, a)
        torch = dict(tool="torch", elapsed_s=elapsed, accuracy=acc)
        self.assertEqual(report.accuracy_curve(torch), list(zip(elapsed, acc)))


class Memory(unittest.TestCase):
    def test_pytorch_peak_and_its_cublas_share_are_shown_with_cbtrain_per_learner(self):
        rng = random.Random(3)
        peak, ws, cbt = (rng.randint(50, 300) * 1048576 + rng.randint(0, 1048575) for _ in range(3))
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, "results"))
            dump(dict(model="lenet5", results=[
                dict(model="lenet5", batch=32, mode="eager", k=1, images_per_sec=1000.0,
                     peak_bytes=peak, cublas_workspace_bytes=ws, error=None)]),
                 os.path.join(root, "results", "torch_throughput_lenet5.json"))
            dump(dict(runs=[dict(model="lenet5", batch=32, learners_requested="1", learners=1,
                                 images_per_sec=2000.0, peak_bytes_per_learner=cbt, error=None)]),
                 os.path.join(root, "results", "cbtrain_throughput_lenet5.json"))
            lines = report.memory_section(report.load(root), report.Notes())
            row = [c.strip() for c in lines[-1].strip("|").split("|")]
            self.assertEqual(row[2], f"{peak / MIB:.1f}")
            self.assertEqual(row[3], f"{ws / MIB:.1f}")
            self.assertEqual(row[5], f"{cbt / MIB:.1f}")
            self.assertEqual(row[7], f"{cbt / peak:.2f}×")


if __name__ == "__main__":
    unittest.main()
