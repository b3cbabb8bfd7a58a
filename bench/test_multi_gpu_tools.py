#!/usr/bin/env python3
"""Tests of the multi-GPU benchmark tooling that need neither a GPU nor PyTorch.

    python3 -m unittest discover -s bench -p 'test_*.py'

torch_ddp.py's pure helpers and argument checks; cbtrain_runs.py against a fake cbtrain
(a script that prints what cbtrain prints and stops on SIGTERM as cbtrain does); and
report_multi_gpu.py on fabricated result files with random figures.
"""

import json
import os
import random
import stat
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import report_multi_gpu as rmg  # noqa: E402
import torch_ddp  # noqa: E402

def dump(doc, path):
    with open(path, "w") as f:
        json.dump(doc, f)


def slurp(path):
    with open(path) as f:
        return f.read()


def load(path):
    return json.loads(slurp(path))


FAKE_CBTRAIN = textwrap.dedent("""\
    #!/usr/bin/env python3
    # Prints what cbtrain prints; accuracies per epoch from FAKE_ACCS, FAKE_EPOCH_S per epoch.
    import json, os, signal, sys, time
    stop = []
    signal.signal(signal.SIGTERM, lambda s, f: stop.append(s))
    argv = sys.argv[1:]
    with open(os.environ["FAKE_ARGV"], "w") as f:
        json.dump(argv, f)
    def flag(name, default=None):
        return argv[argv.index(name) + 1] if name in argv else default
    gpus = flag("--gpus", "0").split(",")
    k = int(os.environ.get("FAKE_K", "3"))
    if os.environ.get("FAKE_REFUSE"):  # a usage error, worded as CLI11 words it
        print("The following arguments were not expected: " + os.environ["FAKE_REFUSE"], file=sys.stderr)
        print("Run with --help for more information.", file=sys.stderr)
        sys.exit(2)
    if flag("--learners") == "auto":
        print(f"autotune: chose {k} learner(s) per device")
    if argv[0] == "bench":
        print(json.dumps({"model": argv[1], "batch": int(flag("--batch-size")),
                          "learners": k * len(gpus), "images_per_sec": float(os.environ["FAKE_IPS"]),
                          "peak_bytes_per_learner": 1000}))
        sys.exit(0)
    accs = [float(a) for a in os.environ["FAKE_ACCS"].split(",")]
    dt = float(os.environ.get("FAKE_EPOCH_S", "0.1"))
    elapsed = 0.0
    with open(flag("--metrics"), "w") as m:
        for e in range(1, int(flag("--epochs")) + 1):
            for _ in range(10):
                time.sleep(dt / 10)
                if stop:
                    print("interrupted")
                    sys.exit(128 + stop[0])
            elapsed += dt
            m.write(json.dumps({"epoch": e, "test_accuracy": accs[min(e, len(accs)) - 1],
                                "elapsed_s": elapsed}) + "\\n")
            m.flush()
    print("final test accuracy")
    """)


class DdpHelpers(unittest.TestCase):
    def test_shards_are_disjoint_equal_and_within_range(self):
        rng = random.Random(7)
        for _ in range(50):
            n, world = rng.randint(1, 100000), rng.randint(1, 8)
            bounds = [torch_ddp.shard_bounds(n, world, r) for r in range(world)]
            sizes = {hi - lo for lo, hi in bounds}
            self.assertEqual(sizes, {n // world})
            for (lo1, hi1), (lo2, _) in zip(bounds, bounds[1:]):
                self.assertEqual(hi1, lo2)
            self.assertLessEqual(bounds[-1][1], n)
            self.assertGreater(bounds[-1][1], n - world)

    def test_steps_per_epoch_counts_full_batches_of_a_shard(self):
        rng = random.Random(8)
        for _ in range(50):
            n, world, b = rng.randint(1, 70000), rng.randint(1, 8), rng.randint(1, 512)
            s = torch_ddp.steps_per_epoch(n, world, b)
            self.assertLessEqual(s * b * world, n)
            self.assertGreater((s + 1) * b, n // world)

    def test_learning_rate_scaling_and_cosine(self):
        lr = random.uniform(0.001, 0.5)
        for world in range(1, 9):
            self.assertAlmostEqual(torch_ddp.effective_lr(lr, world, "linear"), lr * world)
            self.assertEqual(torch_ddp.effective_lr(lr, world, "none"), lr)
        with self.assertRaises(ValueError):
            torch_ddp.effective_lr(lr, 2, "sqrt")
        total = random.randint(10, 10000)
        self.assertAlmostEqual(torch_ddp.cosine_lr(lr, 0, total), lr)
        self.assertAlmostEqual(torch_ddp.cosine_lr(lr, total, total), 0.0)
        self.assertAlmostEqual(torch_ddp.cosine_lr(lr, total // 2, total),
                               0.5 * lr * (1 + __import__("math").cos(
                                   __import__("math").pi * (total // 2) / total)))
        prev = lr
        for s in range(0, total + 1, max(1, total // 20)):
            v = torch_ddp.cosine_lr(lr, s, total)
            self.assertLessEqual(v, prev + 1e-15)
            prev = v

    def test_budget_predicts_the_next_epoch(self):
        b = random.uniform(50, 500)
        e = random.uniform(1, 20)
        self.assertFalse(torch_ddp.over_budget(b - e - 1, e, b))
        self.assertTrue(torch_ddp.over_budget(b - e + 1, e, b))
        self.assertFalse(torch_ddp.over_budget(10 * b, e, 0))

    def test_arguments(self):
        a = torch_ddp.parse_args(["tta", "--gpus", "4", "--model", "resnet20", "--lr", "0.05",
                                  "--target", "0.91", "--out", "x.json", "--budget", "120"])
        self.assertEqual((a.gpus, a.lr_scaling, a.schedule, a.batch), (4, "linear", "cosine", 32))
        t = torch_ddp.parse_args(["throughput", "--gpus", "2", "--models", "resnet32",
                                  "--quick", "--out", "y.json"])
        self.assertEqual(t.models, ["resnet32"])
        self.assertEqual(torch_ddp.window_settings("resnet32", t), (30, 3, 10))
        t.steps, t.windows = 7, 2
        self.assertEqual(torch_ddp.window_settings("lenet5", t), (7, 2, 10))
        bad = [["tta", "--gpus", "0", "--model", "lenet5", "--lr", "0.1", "--target", "0.9",
                "--out", "z"],
               ["tta", "--gpus", "2", "--model", "lenet5", "--lr", "0.1", "--target", "90",
                "--out", "z"],
               ["tta", "--gpus", "2", "--model", "vgg", "--lr", "0.1", "--target", "0.9",
                "--out", "z"],
               ["throughput", "--gpus", "2", "--models", "lenet5,alexnet", "--out", "z"],
               ["throughput", "--gpus", "2", "--steps", "-1", "--out", "z"]]
        for argv in bad:
            with self.assertRaises(SystemExit, msg=" ".join(argv)):
                with open(os.devnull, "w") as devnull:
                    old, sys.stderr = sys.stderr, devnull
                    try:
                        torch_ddp.parse_args(argv)
                    finally:
                        sys.stderr = old


class CbtrainRuns(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.fake = os.path.join(self.dir, "cbtrain")
        with open(self.fake, "w") as f:
            f.write(FAKE_CBTRAIN)
        os.chmod(self.fake, os.stat(self.fake).st_mode | stat.S_IXUSR)
        self.env = dict(os.environ, FAKE_ARGV=os.path.join(self.dir, "argv.json"))

    def tearDown(self):
        self.tmp.cleanup()

    def run_tool(self, args, **env):
        e = dict(self.env, **{k: str(v) for k, v in env.items()})
        p = subprocess.run([sys.executable, os.path.join(HERE, "cbtrain_runs.py")] + args,
                           env=e, capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p

    def tta_args(self, out, epochs, target, gpus="0,1", extra=()):
        return ["tta", "--cbtrain", self.fake, "--model", "m.onnx", "--name", "lenet5",
                "--epochs", str(epochs), "--target", str(target), "--data", self.dir,
                "--gpus", gpus, "--out", out, "--logs", os.path.join(self.dir, "logs")] + list(extra)

    def test_stops_at_the_target_and_reads_the_learners(self):
        rng = random.Random(11)
        hit = rng.randint(2, 5)
        accs = sorted(rng.uniform(0.5, 0.89) for _ in range(hit - 1)) + [0.95] * 20
        k = rng.randint(1, 16)
        out = os.path.join(self.dir, "tta.json")
        self.run_tool(self.tta_args(out, 20, 0.9, extra=["--stop-at-target", "--budget", "60"]),
                      FAKE_ACCS=",".join(map(str, accs)), FAKE_EPOCH_S=0.3, FAKE_K=k)
        doc = load(out)
        self.assertTrue(doc["reached"])
        self.assertEqual(doc["epochs_to_target"], hit)
        self.assertEqual(doc["stopped"], "target")
        self.assertIsNone(doc["error"])
        self.assertLess(doc["epochs"], 20)          # stopped early, not after all epochs
        self.assertEqual(doc["gpus"], 2)
        self.assertEqual(doc["learners_per_gpu"], k)
        self.assertEqual(doc["learners_chosen"], 2 * k)
        argv = load(self.env["FAKE_ARGV"])
        self.assertEqual(argv[argv.index("--gpus") + 1], "0,1")
        self.assertTrue(rmg.is_done(out, 60))

    def test_budget_ends_a_run_that_does_not_reach_the_target(self):
        out = os.path.join(self.dir, "tta.json")
        budget = round(random.uniform(3.0, 4.0), 2)
        self.run_tool(self.tta_args(out, 100, 0.99, extra=["--stop-at-target", "--budget",
                                                          f"{budget:.2f}"]),
                      FAKE_ACCS="0.5,0.6,0.7", FAKE_EPOCH_S=0.2)
        doc = load(out)
        self.assertFalse(doc["reached"])
        self.assertEqual(doc["stopped"], "budget")
        self.assertIsNone(doc["error"])
        self.assertLess(doc["wall_seconds"], budget + 5)
        self.assertGreater(doc["epochs"], 0)
        # Cut by a cap smaller than the run's own: to be run again; by its own cap: done.
        self.assertFalse(rmg.is_done(out, budget + 100))
        self.assertTrue(rmg.is_done(out, budget))

    def test_runs_to_the_end_without_stop_flags(self):
        out = os.path.join(self.dir, "tta.json")
        epochs = random.randint(2, 4)
        self.run_tool(self.tta_args(out, epochs, 0.9, gpus="0"),
                      FAKE_ACCS="0.91,0.92,0.93,0.94", FAKE_EPOCH_S=0.05)
        doc = load(out)
        self.assertEqual((doc["epochs"], doc["stopped"], doc["epochs_to_target"]), (epochs, "end", 1))

    def test_throughput_on_several_gpus(self):
        out = os.path.join(self.dir, "tput.json")
        ips, k, n = random.uniform(1e3, 1e6), random.randint(1, 16), random.randint(2, 8)
        self.run_tool(["throughput", "--cbtrain", self.fake, "--models-dir", self.dir,
                       "--models", "lenet5", "--batches", "32", "--ks", "auto",
                       "--gpus", ",".join(map(str, range(n))), "--out", out,
                       "--logs", os.path.join(self.dir, "logs")],
                      FAKE_IPS=ips, FAKE_K=k)
        doc = load(out)
        r = doc["runs"][0]
        self.assertIsNone(r["error"])
        self.assertEqual((r["gpus"], r["learners"], r["learners_per_gpu"]), (n, n * k, k))
        self.assertAlmostEqual(r["images_per_sec_per_gpu"], ips / n, places=3)
        self.assertTrue(doc["complete"])


    def test_a_refused_flag_is_named_in_the_error(self):
        out = os.path.join(self.dir, "tput.json")
        n = random.randint(2, 64)
        self.run_tool(["throughput", "--cbtrain", self.fake, "--models-dir", self.dir,
                       "--models", "lenet5", "--batches", "32", "--ks", "auto", "--out", out,
                       "--logs", os.path.join(self.dir, "logs"),
                       "--", "--autotune-max-learners", str(n)],
                      FAKE_IPS=1.0, FAKE_REFUSE=f"{n} --autotune-max-learners")
        err = load(out)["runs"][0]["error"]
        self.assertEqual(err, "exit 2: The following arguments were not expected: "
                              f"{n} --autotune-max-learners")


class Report(unittest.TestCase):
    def fabricate(self, root, rng, counts):
        res = os.path.join(root, "results")
        os.makedirs(res)
        os.makedirs(os.path.join(root, "env"))
        truth = {}
        for n in counts:
            results = []
            for m in ("lenet5", "resnet32"):
                d = rng.uniform(1e3, 1e5) * n
                c = rng.uniform(1e3, 1e6) * n
                k = rng.randint(1, 16)
                truth[(m, n)] = (d, c, k)
                results.append(dict(model=m, gpus=n, batch=32, images_per_sec=d, error=None))
                dump(dict(tool="cbtrain", complete=True, runs=[dict(
                    model=m, gpus=n, learners=n * k, learners_per_gpu=k, images_per_sec=c,
                    error=None)]), os.path.join(res, f"mg_cbtrain_throughput_{m}_g{n}.json"))
            dump(dict(tool="torch_ddp", gpus=n, models=["lenet5", "resnet32"], complete=True,
                      results=results, env=dict(gpu="GPU X")),
                 os.path.join(res, f"mg_ddp_throughput_g{n}.json"))
            for m, target in (("lenet5", 0.9), ("resnet20", 0.91)):
                ds, cs = rng.uniform(10, 200) / n, rng.uniform(1, 50) / n
                search = rng.uniform(2, 20)  # cbtrain's learner search, before its clock
                truth[("tta", m, n)] = (ds, cs + search)
                for system, secs, extra in (("ddp", ds, {}), ("cbtrain", cs, dict(autotune_seconds=search))):
                    dump(dict(tool=system, model=m, gpus=n, target=target, reached=True,
                              seconds_to_target=secs, epochs_to_target=rng.randint(1, 9),
                              accuracy=[0.5, target + 0.001], train_seconds=secs,
                              lr_effective=0.02 * n, global_batch=32 * n, max_epochs=10,
                              learners_per_gpu=rng.randint(1, 9), seed=1, complete=True,
                              error=None, stopped="target", **extra),
                         os.path.join(res, f"mg_tta_{system}_{m}_g{n}_s1.json"))
        return truth

    def test_speedups_ratios_and_goals_follow_the_results(self):
        rng = random.Random(5)
        counts = [1, 2, 4]
        with tempfile.TemporaryDirectory() as root:
            truth = self.fabricate(root, rng, counts)
            # One failed DDP run and one not reached, to see them noted.
            failed = os.path.join(root, "results", "mg_tta_ddp_resnet20_g4_s1.json")
            dump(dict(tool="torch_ddp", model="resnet20", gpus=4, complete=True, reached=False,
                      error="ProcessRaisedException: CUDA out of memory", accuracy=[]), failed)
            with open(os.devnull, "w") as devnull:
                old, sys.stdout = sys.stdout, devnull
                try:
                    self.assertEqual(rmg.main([root]), 0)
                finally:
                    sys.stdout = old
            md = slurp(os.path.join(root, "MULTI_GPU.md"))
            summary = load(os.path.join(root, "results", "mg_summary.json"))
            for row in summary["throughput"]:
                d, c, k = truth[(row["model"], row["gpus"])]
                d1, c1, _ = truth[(row["model"], 1)]
                self.assertAlmostEqual(row["ddp_speedup"], d / d1)
                self.assertAlmostEqual(row["cbtrain_speedup"], c / c1)
                self.assertAlmostEqual(row["cbtrain_efficiency"], c / c1 / row["gpus"])
                self.assertAlmostEqual(row["cbtrain_over_ddp"], c / d)
                self.assertEqual(row["cbtrain_learners_per_gpu"], k)
                self.assertIn(f"{c:,.0f} (K={k})", md)
            for row in summary["time_to_accuracy"]:
                ds, cs = truth[("tta", row["model"], row["gpus"])]
                self.assertAlmostEqual(row["cbtrain_seconds"], cs)
                if row["model"] == "resnet20" and row["gpus"] == 4:
                    self.assertIsNone(row["ddp_seconds"])
                    self.assertIsNone(row["cbtrain_over_ddp"])
                else:
                    self.assertAlmostEqual(row["cbtrain_over_ddp"], cs / ds)
            self.assertIn("CUDA out of memory", md)
            self.assertIn("(search ", md)  # cbtrain's cells name the search their seconds include
            goals = {g["goal"]: g for g in summary["goals"]}
            for m in ("lenet5", "resnet32"):
                effs = [truth[(m, n)][1] / truth[(m, 1)][1] / n for n in (2, 4)]
                g = next(v for k, v in goals.items() if k.startswith(rmg.MODEL_TITLE[m]) and
                         "linear" in k)
                self.assertEqual(g["met"], min(effs) >= rmg.EFFICIENCY_GOAL)
            for m in ("lenet5", "resnet20"):
                ds, cs = truth[("tta", m, 2)]
                g = next(v for k, v in goals.items() if k.startswith(rmg.MODEL_TITLE[m]) and
                         "two GPUs" in k)
                self.assertEqual(g["met"], cs / ds <= rmg.TWO_GPU_GOAL)
                g4 = next(v for k, v in goals.items() if k.startswith(rmg.MODEL_TITLE[m]) and
                          "no worse" in k)
                self.assertEqual(g4["met"], truth[("tta", m, 4)][1] <= truth[("tta", m, 2)][1])

    def test_is_done(self):
        with tempfile.TemporaryDirectory() as root:
            p = os.path.join(root, "r.json")
            self.assertFalse(rmg.is_done(p, 100))
            cap = random.randint(30, 300)
            cases = [(dict(complete=False), False),
                     (dict(complete=True, reached=True, stopped="target", budget_s=cap / 2), True),
                     (dict(complete=True, reached=False, stopped="budget", budget_s=cap - 1), False),
                     (dict(complete=True, reached=False, stopped="budget", budget_s=cap), True),
                     (dict(complete=True, reached=False, stopped="max_epochs", budget_s=1), True),
                     (dict(complete=True, error="exit 1: boom"), True),
                     (dict(complete=True, timeout_s=cap - 1, runs=[dict(error="timed out after 9 s")]),
                      False),
                     (dict(complete=True, timeout_s=cap, runs=[dict(error="timed out after 9 s")]),
                      True)]
            for doc, want in cases:
                dump(doc, p)
                self.assertEqual(rmg.is_done(p, cap), want, doc)
            with open(p, "w") as f:
                f.write("{not json")
            self.assertFalse(rmg.is_done(p, cap))


if __name__ == "__main__":
    unittest.main()
