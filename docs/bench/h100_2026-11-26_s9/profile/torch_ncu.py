# LeNet-5 eager training steps under Nsight Compute: profiling starts after the warm-up.
import sys, torch
sys.path.insert(0, "bench")
import models
torch.backends.cudnn.benchmark = True
models.set_precision("fp32")
m = models.build("lenet5")[0].cuda()
opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
x = torch.randn(32, 1, 28, 28, device="cuda"); y = torch.randint(0, 10, (32,), device="cuda")
loss_fn = torch.nn.CrossEntropyLoss()
def step():
    opt.zero_grad(set_to_none=True)
    loss_fn(m(x), y).backward()
    opt.step()
for _ in range(30): step()
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStart()
for _ in range(5): step()
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStop()
