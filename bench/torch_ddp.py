#!/usr/bin/env python3
"""PyTorch DistributedDataParallel on N GPUs of one machine: throughput and time to accuracy.

    python3 bench/torch_ddp.py throughput --gpus N --models lenet5,resnet32 --batch 32 \
        --out FILE.json [--steps S] [--windows 5] [--warmup 10] [--quick]
    python3 bench/torch_ddp.py tta --gpus N --model lenet5|resnet20 --batch 32 --lr 0.02 \
        [--lr-scaling linear|none] [--schedule cosine|constant] --target 0.90 \
        --max-epochs 10 --seed 1 --data DIR [--init-onnx M.onnx] [--budget SECONDS] --out FILE.json

One process per GPU (torch.multiprocessing.spawn), NCCL, MASTER_ADDR=127.0.0.1 and a free
port; batch --batch per GPU; SGD with momentum 0.9 and weight decay 5e-4 (cbtrain's
defaults), foreach. NVLink multicast stays off (NCCL_NVLS_ENABLE=0,
TORCH_SYMM_MEM_DISABLE_MULTICAST=1, NVSHMEM_DISABLE_NVLS=1 are forced for every rank).

throughput: synthetic data resident on every GPU; images/s over all GPUs of a whole DDP
training step = N * batch * steps / seconds, the median over --windows windows (each window
begins after a barrier and ends with a synchronize on every rank; its length is the slowest
rank's). Both models run in one launch, one after the other.

tta: Fashion-MNIST resident on every GPU (normalised as in torch_time_to_accuracy.py); every
epoch all ranks draw the same permutation from a CPU generator seeded with --seed and rank r
trains on its disjoint shard perm[r*n/N : (r+1)*n/N], full batches only. --lr-scaling linear
multiplies --lr by N (the usual rule for a global batch of N*batch). The cosine schedule
goes per step from the learning rate to 0 over --max-epochs (cbtrain's formula). After every
epoch rank 0 evaluates the whole test set while the others wait; evaluation is off the
training clock. Training stops at the first epoch at --target, at --max-epochs, or when the
next epoch would end after --budget seconds of wall clock since the launch (recorded as
"stopped": "budget", i.e. not reached within the budget). Rank 0 rewrites the JSON after
every epoch ("complete": false until the end), so a killed run leaves its epochs behind.
"""

import argparse
import json
import math
import os
import socket
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# NVLink multicast can put a shared host's GPUs out of service: off for every rank, whatever
# the caller's environment says.
NO_MULTICAST = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
                "NVSHMEM_DISABLE_NVLS": "1"}
os.environ.update(NO_MULTICAST)

MODELS = ("lenet5", "resnet20", "resnet32")
LR_THROUGHPUT = 1e-3  # random labels: a small rate keeps the weights finite; speed is the same
STOP_NONE, STOP_TARGET, STOP_DIVERGED, STOP_BUDGET = 0, 1, 2, 3
STOP_NAMES = {STOP_TARGET: "target", STOP_DIVERGED: "diverged", STOP_BUDGET: "budget"}


# ---- pure helpers (no torch; unit-tested on machines without it) ----

def effective_lr(lr, world, scaling):
    """The learning rate DDP trains with for a global batch of world * batch."""
    if scaling == "linear":
        return lr * world
    if scaling == "none":
        return lr
    raise ValueError(f"--lr-scaling must be linear or none, not '{scaling}'")


def cosine_lr(lr, step, total_steps):
    """cbtrain's cosine schedule: from lr at step 0 to 0 at total_steps."""
    return 0.5 * lr * (1.0 + math.cos(math.pi * min(1.0, step / max(1, total_steps))))


def shard_bounds(n, world, rank):
    """[begin, end) of rank's shard of a permutation of n samples: equal, disjoint shards."""
    per = n // world
    return rank * per, (rank + 1) * per


def steps_per_epoch(n, world, batch):
    return (n // world) // batch


def over_budget(wall_s, last_epoch_wall_s, budget_s):
    """Whether the next epoch, as long as the last one, would end after the budget."""
    return budget_s is not None and budget_s > 0 and wall_s + last_epoch_wall_s > budget_s


def window_settings(model, a):
    """(steps per window, windows, warm-up steps): the flags, else the defaults: 5 windows
    of 200 steps (LeNet-5) or 60 (ResNets); --quick: 3 windows of 100 or 30."""
    lenet = model == "lenet5"
    steps = a.steps or ((100 if lenet else 30) if a.quick else (200 if lenet else 60))
    windows = a.windows or (3 if a.quick else 5)
    return steps, windows, a.warmup


def parse_models(s):
    names = [m for m in s.split(",") if m]
    bad = [m for m in names if m not in MODELS]
    if not names or bad:
        raise argparse.ArgumentTypeError(
            f"--models takes names from {', '.join(MODELS)}, not '{s}'")
    return names


def positive_int(s):
    try:
        v = int(s)
    except ValueError:
        v = 0
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, not '{s}'")
    return v


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("throughput", help="images/s of a DDP training step on synthetic data")
    t.add_argument("--gpus", type=positive_int, required=True, help="GPUs (processes): 0..N-1")
    t.add_argument("--models", type=parse_models, default=["lenet5", "resnet32"])
    t.add_argument("--batch", type=positive_int, default=32, help="per GPU")
    t.add_argument("--steps", type=int, default=0,
                   help="steps per timing window (default 200 for lenet5, 60 for ResNets)")
    t.add_argument("--windows", type=int, default=0, help="timing windows (default 5; --quick 3)")
    t.add_argument("--warmup", type=int, default=10)
    t.add_argument("--quick", action="store_true",
                   help="defaults of 3 windows of 100 (lenet5) or 30 steps (smoke run)")
    t.add_argument("--out", required=True)
    precision_arg(t)
    r = sub.add_parser("tta", help="DDP training on Fashion-MNIST until a test accuracy")
    r.add_argument("--gpus", type=positive_int, required=True)
    r.add_argument("--model", required=True, choices=["lenet5", "resnet20"])
    r.add_argument("--batch", type=positive_int, default=32, help="per GPU")
    r.add_argument("--lr", type=float, required=True, help="for one GPU; see --lr-scaling")
    r.add_argument("--lr-scaling", choices=["linear", "none"], default="linear")
    r.add_argument("--schedule", choices=["constant", "cosine"], default="cosine")
    r.add_argument("--momentum", type=float, default=0.9)
    r.add_argument("--weight-decay", type=float, default=5e-4)
    r.add_argument("--target", type=float, required=True)
    r.add_argument("--max-epochs", type=positive_int, default=15)
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--data", default=os.environ.get("CBT_DATA",
                                                    "/usr/share/datasets/fashion-mnist"))
    r.add_argument("--init-onnx", default="", help="start from this ONNX file's weights")
    r.add_argument("--budget", type=float, default=0,
                   help="wall-clock seconds since the launch; 0: none")
    r.add_argument("--out", required=True)
    precision_arg(r)
    a = ap.parse_args(argv)
    if a.cmd == "throughput" and min(a.steps, a.windows, a.warmup) < 0:
        ap.error("--steps, --windows and --warmup cannot be negative")
    if a.cmd == "tta" and not (0 < a.target <= 1):
        ap.error(f"--target is a fraction in (0, 1], not {a.target}")
    if a.cmd == "tta" and a.lr <= 0:
        ap.error(f"--lr must be positive, not {a.lr}")
    return a


def write_json(path, doc):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, path)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---- workers (one process per GPU) ----

def precision_arg(parser):
    # models.set_precision applies it in each rank (this module imports no torch at load)
    parser.add_argument("--precision", default="fp32", choices=["fp32", "tf32"],
                        help="fp32 (TF32 off, as cbtrain's default) or tf32")


def init_rank(rank, world, port, precision):
    import torch
    import torch.distributed as dist
    from models import set_precision
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=dev)
    torch.backends.cudnn.benchmark = True
    set_precision(precision)
    return dev


def environment(world):
    import torch
    nccl = None
    try:
        nccl = ".".join(str(v) for v in torch.cuda.nccl.version())
    except Exception:  # noqa: BLE001 - informational only
        pass
    return dict(gpu=torch.cuda.get_device_name(0), gpus=world,
                gpu_memory_bytes=torch.cuda.get_device_properties(0).total_memory,
                torch=torch.__version__, cuda=torch.version.cuda,
                cudnn=torch.backends.cudnn.version(), nccl=nccl, cudnn_benchmark=True,
                cudnn_allow_tf32=torch.backends.cudnn.allow_tf32,
                matmul_allow_tf32=torch.backends.cuda.matmul.allow_tf32,
                **{k: os.environ.get(k) for k in NO_MULTICAST})


def max_over_ranks(value, dev):
    import torch
    import torch.distributed as dist
    t = torch.tensor([float(value)], dtype=torch.float64, device=dev)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()


def throughput_worker(rank, world, port, a, doc):
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP
    from models import build
    dev = init_rank(rank, world, port, a.precision)
    if rank == 0:
        doc["env"] = environment(world)
    t_start = time.perf_counter()
    for name in a.models:
        steps, windows, warmup = window_settings(name, a)
        rec = dict(model=name, gpus=world, batch=a.batch, global_batch=world * a.batch,
                   mode="ddp eager", steps_per_window=steps, windows=windows, warmup_steps=warmup)
        t0 = time.perf_counter()
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        torch.manual_seed(0)  # same initial weights everywhere (DDP broadcasts rank 0's anyway)
        model, shape = build(name)
        model.to(dev).train()
        ddp = DDP(model, device_ids=[rank], gradient_as_bucket_view=True)
        opt = torch.optim.SGD(ddp.parameters(), lr=LR_THROUGHPUT, momentum=0.9,
                              weight_decay=5e-4, foreach=True)
        gen = torch.Generator(device=dev)
        gen.manual_seed(1000 + rank)
        x = torch.randn((a.batch,) + tuple(shape), device=dev, generator=gen)
        y = torch.randint(0, 10, (a.batch,), device=dev, generator=gen)

        def step():
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(ddp(x), y)
            loss.backward()
            opt.step()

        for _ in range(warmup):
            step()
        rates, secs = [], []
        for _ in range(windows):
            torch.cuda.synchronize()
            dist.barrier()
            w0 = time.perf_counter()
            for _ in range(steps):
                step()
            torch.cuda.synchronize()
            dt = max_over_ranks(time.perf_counter() - w0, dev)
            secs.append(dt)
            rates.append(world * a.batch * steps / dt)
        peak = max_over_ranks(torch.cuda.max_memory_allocated() - base, dev)
        rec.update(images_per_sec=statistics.median(rates), window_images_per_sec=rates,
                   window_seconds=secs, images_per_sec_per_gpu=statistics.median(rates) / world,
                   peak_bytes_per_gpu=int(peak), error=None,
                   seconds=time.perf_counter() - t0)
        del ddp, model, opt
        if rank == 0:
            print(f"DDP {name} on {world} GPU(s), batch {a.batch} per GPU: "
                  f"{rec['images_per_sec']:.0f} img/s", flush=True)
            doc["results"].append(rec)
            doc["total_seconds"] = time.perf_counter() - t_start
            write_json(a.out, doc)
    if rank == 0:
        doc["complete"] = True
        write_json(a.out, doc)
    dist.barrier()
    dist.destroy_process_group()


def tta_worker(rank, world, port, a, doc, launch_wall):
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP
    from models import build, load_onnx_weights
    from torch_time_to_accuracy import evaluate, load_split
    dev = init_rank(rank, world, port, a.precision)
    torch.manual_seed(a.seed)
    xtr, ytr = load_split(a.data, "train", dev)
    xte, yte = (load_split(a.data, "t10k", dev) if rank == 0 else (None, None))
    model, shape = build(a.model)
    if tuple(shape) != tuple(xtr.shape[1:]):
        raise RuntimeError(f"{a.model} takes {shape}, the data set has {tuple(xtr.shape[1:])}")
    if a.init_onnx:
        missing = load_onnx_weights(model, a.init_onnx)
        if missing:
            raise RuntimeError(f"{a.init_onnx}: no initializer for {missing}")
    model.to(dev).train()
    ddp = DDP(model, device_ids=[rank], gradient_as_bucket_view=True)
    lr = effective_lr(a.lr, world, a.lr_scaling)
    opt = torch.optim.SGD(ddp.parameters(), lr=lr, momentum=a.momentum,
                          weight_decay=a.weight_decay, foreach=True)
    n = xtr.shape[0]
    spe = steps_per_epoch(n, world, a.batch)
    if spe < 1:
        raise RuntimeError(f"{n} samples give no full batch of {a.batch} on each of {world} GPUs")
    total_steps = spe * a.max_epochs
    lo, hi = shard_bounds(n, world, rank)
    gen = torch.Generator()  # CPU: the same permutation on every rank
    gen.manual_seed(a.seed)
    if rank == 0:
        doc.update(env=environment(world), lr_effective=lr, steps_per_epoch=spe,
                   samples_per_epoch=spe * a.batch * world)
    history, train_seconds, step, stop = [], 0.0, 0, STOP_NONE
    last_wall = time.time()
    flag = torch.zeros(1, dtype=torch.int32, device=dev)
    for epoch in range(1, a.max_epochs + 1):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        perm = torch.randperm(n, generator=gen)[lo:hi].to(dev, non_blocking=True)
        loss_sum = torch.zeros(1, device=dev)
        for s in range(spe):
            if a.schedule == "cosine":
                for g in opt.param_groups:
                    g["lr"] = cosine_lr(lr, step, total_steps)
            idx = perm[s * a.batch:(s + 1) * a.batch]
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(ddp(xtr[idx]), ytr[idx])
            loss.backward()
            opt.step()
            loss_sum += loss.detach()
            step += 1
        # The epoch ends when the slowest rank is done: the loss sum goes through NCCL.
        dist.all_reduce(loss_sum)
        torch.cuda.synchronize()
        epoch_s = time.perf_counter() - t0
        train_seconds += epoch_s
        if rank == 0:
            train_loss = loss_sum.item() / (spe * world)
            acc, test_loss = evaluate(ddp.module, xte, yte)
            now = time.time()
            history.append(dict(epoch=epoch, test_accuracy=acc, test_loss=test_loss,
                                train_loss=train_loss, elapsed_s=train_seconds,
                                epoch_seconds=epoch_s, wall_s=now - launch_wall,
                                lr=opt.param_groups[0]["lr"]))
            print(f"epoch {epoch}: train loss {train_loss:.4f}, test accuracy {100 * acc:.2f}%, "
                  f"{train_seconds:.1f} s of training ({world} GPU(s))", flush=True)
            if not math.isfinite(train_loss):
                stop = STOP_DIVERGED
            elif acc >= a.target:
                stop = STOP_TARGET
            elif epoch < a.max_epochs and over_budget(now - launch_wall, now - last_wall,
                                                      a.budget):
                stop = STOP_BUDGET
            last_wall = now
            fill_tta_doc(doc, history, stop, train_seconds, a)
            write_json(a.out, doc)
            flag.fill_(stop)
        dist.broadcast(flag, src=0)
        if flag.item() != STOP_NONE:
            break
    if rank == 0:
        doc["complete"] = True
        write_json(a.out, doc)
    dist.barrier()
    dist.destroy_process_group()


def fill_tta_doc(doc, history, stop, train_seconds, a):
    reached = history[-1]["epoch"] if stop == STOP_TARGET else None
    doc.update(epochs=len(history), train_seconds=train_seconds,
               accuracy=[h["test_accuracy"] for h in history],
               elapsed_s=[h["elapsed_s"] for h in history],
               reached=reached is not None, epochs_to_target=reached,
               seconds_to_target=history[-1]["elapsed_s"] if reached else None,
               stopped=STOP_NAMES.get(stop, "max_epochs" if len(history) >= a.max_epochs
                                      else "running"),
               history=history)


def tta_doc(a, world):
    return dict(tool="torch_ddp", model=a.model, gpus=world, batch=a.batch,
                global_batch=world * a.batch, learners=1, lr=a.lr, lr_scaling=a.lr_scaling,
                lr_effective=effective_lr(a.lr, world, a.lr_scaling), schedule=a.schedule,
                momentum=a.momentum, weight_decay=a.weight_decay, target=a.target,
                max_epochs=a.max_epochs, seed=a.seed, init_onnx=a.init_onnx or None,
                budget_s=a.budget or None, epochs=0, train_seconds=0.0, accuracy=[],
                elapsed_s=[], reached=False, epochs_to_target=None, seconds_to_target=None,
                stopped="running", history=[], error=None, complete=False,
                cmd=" ".join([os.path.basename(sys.executable)] + sys.argv))


def throughput_doc(a, world):
    return dict(tool="torch_ddp", gpus=world, batch=a.batch, models=a.models, quick=a.quick,
                optimizer="SGD momentum 0.9, weight decay 5e-4 (foreach)",
                loss="cross_entropy", results=[], error=None, complete=False,
                cmd=" ".join([os.path.basename(sys.executable)] + sys.argv))


def main(argv=None):
    a = parse_args(argv)
    launch_wall = time.time()
    world = a.gpus
    doc = tta_doc(a, world) if a.cmd == "tta" else throughput_doc(a, world)
    out_dir = os.path.dirname(os.path.abspath(a.out))
    os.makedirs(out_dir, exist_ok=True)
    if os.path.exists(a.out):
        os.remove(a.out)
    try:
        import torch
        import torch.multiprocessing as mp
    except ImportError as e:
        doc["error"] = f"PyTorch is not available: {e}"
        write_json(a.out, doc)
        print(doc["error"], file=sys.stderr)
        return 2
    visible = torch.cuda.device_count()
    if visible < world:
        doc["error"] = f"--gpus {world} but only {visible} CUDA device(s) are visible"
        write_json(a.out, doc)
        print(doc["error"], file=sys.stderr)
        return 2
    port = free_port()
    try:
        if a.cmd == "tta":
            mp.spawn(tta_worker, args=(world, port, a, doc, launch_wall), nprocs=world, join=True)
        else:
            mp.spawn(throughput_worker, args=(world, port, a, doc), nprocs=world, join=True)
    except Exception as e:  # noqa: BLE001 - a rank failed: record it with what was done
        msg = str(e).strip().splitlines()
        reason = f"{type(e).__name__}: {msg[-1] if msg else ''}"
        try:
            with open(a.out) as f:
                doc = json.load(f)
        except (OSError, ValueError):
            pass
        doc["error"] = reason
        doc["complete"] = True
        doc["wall_seconds"] = time.time() - launch_wall
        write_json(a.out, doc)
        print(f"FAILED: {reason}", file=sys.stderr, flush=True)
        return 1
    with open(a.out) as f:
        doc = json.load(f)
    doc["wall_seconds"] = time.time() - launch_wall
    write_json(a.out, doc)
    if a.cmd == "tta":
        print(f"DDP {a.model} on {world} GPU(s): "
              + (f"reached {100 * a.target:.1f}% at epoch {doc['epochs_to_target']} after "
                 f"{doc['seconds_to_target']:.1f} s of training" if doc.get("reached") else
                 f"did not reach {100 * a.target:.1f}% ({doc.get('epochs')} epochs, "
                 f"stopped: {doc.get('stopped')})"), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
