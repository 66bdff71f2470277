# A DDP check for gantry run --local: 4 ranks over gloo all-reduce their ranks (6), train a seeded
# linear model for 200 steps, and write what they saw to $OUT_DIR/out-<rank>.json. Rank 0 reports
# progress 3 times through the status server gantry injects. With $FAIL_RANK that rank exits 3
# before the all-reduce, which fails on the other ranks.
import hashlib
import json
import os
import ssl
import sys
import urllib.error
import urllib.request

import torch
import torch.distributed as dist


def report(percent, loss, token=None):
    url = os.environ["KUBEFLOW_TRAINER_SERVER_URL"]
    if token is None:
        with open(os.environ["KUBEFLOW_TRAINER_SERVER_TOKEN"]) as f:
            token = f.read().strip()
    ctx = ssl.create_default_context(cafile=os.environ["KUBEFLOW_TRAINER_SERVER_CA_CERT"])
    body = json.dumps({"trainerStatus": {"progressPercentage": percent,
                                         "metrics": [{"name": "loss", "value": "%.4f" % loss}]}}).encode()
    req = urllib.request.Request(url, data=body, method="POST",
                                 headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    urllib.request.urlopen(req, context=ctx, timeout=10).read()


dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
assert world == int(os.environ["WORLD_SIZE"]) == 4, world
if os.environ.get("FAIL_RANK") == str(rank):
    # os._exit: a normal exit may wait for the process group's peers.
    print("rank %d fails on purpose" % rank, file=sys.stderr, flush=True)
    os._exit(3)
t = torch.tensor([float(rank)])
dist.all_reduce(t)
assert t.item() == 6, t

torch.manual_seed(0)
x = torch.randn(512, 10)
y = x @ torch.randn(10, 1) + 0.01 * torch.randn(512, 1)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(10, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
xs, ys = x[rank::world], y[rank::world]
wrong_token = None
if rank == 0:
    try:
        report(0, 0.0, token="not-the-run-token")
    except urllib.error.HTTPError as e:
        wrong_token = e.code
losses = []
for step in range(200):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(xs), ys)
    loss.backward()
    opt.step()
    losses.append(loss.item())
    if rank == 0 and step in (0, 99, 199):
        report(int((step + 1) / 2), loss.item())

digest = hashlib.sha256(b"".join(p.detach().numpy().tobytes() for p in model.parameters())).hexdigest()
out = {"rank": rank, "group_rank": int(os.environ["GROUP_RANK"]), "local_rank": int(os.environ["LOCAL_RANK"]),
       "loss0": losses[0], "lossN": losses[-1], "params": digest, "wrong_token_status": wrong_token}
with open(os.path.join(os.environ["OUT_DIR"], "out-%d.json" % rank), "w") as f:
    json.dump(out, f)
dist.destroy_process_group()
