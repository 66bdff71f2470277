# An elastic check for gantry run --local: the ranks train a seeded model for 150 steps with DDP,
# rank 0 keeping a checkpoint in $OUT_DIR after every step. When a node goes away (the test kills
# its process group), torchrun restarts the worker group on the nodes left, which resume from the
# checkpoint. The last rank 0 writes $OUT_DIR/elastic-out.json.
import json
import os
import time

import torch
import torch.distributed as dist

out_dir = os.environ["OUT_DIR"]
ckpt = os.path.join(out_dir, "elastic.ckpt")
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
restart = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
print("rank %d world %d restart %d" % (rank, world, restart), flush=True)

torch.manual_seed(0)
model = torch.nn.Linear(10, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
start = 0
if os.path.exists(ckpt):
    state = torch.load(ckpt)
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["opt"])
    start = state["step"] + 1
    print("rank %d resumed from step %d" % (rank, state["step"]), flush=True)
ddp = torch.nn.parallel.DistributedDataParallel(model)
x = torch.randn(256, 10)
y = x.sum(1, keepdim=True)
for step in range(start, 150):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(ddp(x), y)
    loss.backward()
    opt.step()
    if rank == 0:
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step}, ckpt + ".tmp")
        os.replace(ckpt + ".tmp", ckpt)
    print("rank %d step %d loss %.4f" % (rank, step, loss.item()), flush=True)
    time.sleep(0.05)
if rank == 0:
    with open(os.path.join(out_dir, "elastic-out.json"), "w") as f:
        json.dump({"world": world, "restart": restart, "start": start}, f)
dist.destroy_process_group()
