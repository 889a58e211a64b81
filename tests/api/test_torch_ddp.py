"""A dfc-compiled module under DistributedDataParallel (gloo, 2 processes on
this machine): after one step, the gradients DDP averaged over the two halves
of a batch equal the single-process gradients of the whole batch."""

from __future__ import annotations

from datetime import timedelta

import pytest

torch = pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import dfc.torch  # noqa: E402
from support.torch_models import make_mlp  # noqa: E402

WORLD = 2


def _worker(rank: int, init_file: str, out_file: str) -> None:
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=WORLD,
                            timeout=timedelta(seconds=300))
    try:
        model, x, y = make_mlp(batch=8)
        if rank == 1:  # DDP broadcasts rank 0's parameters at construction
            with torch.no_grad():
                for p in model.parameters():
                    p.add_(1.0)
        ddp = torch.nn.parallel.DistributedDataParallel(dfc.torch.compile(model, threads=1))
        half = slice(rank * 4, rank * 4 + 4)
        F.cross_entropy(ddp(x[half]), y[half]).backward()
        if rank == 0:
            torch.save({n: p.grad for n, p in model.named_parameters()}, out_file)
        del ddp
        dist.barrier()  # gloo's barrier waits for pending work, whose Python callbacks would
        # otherwise race destroy_process_group for the GIL (a hang seen under heavy load)
    finally:
        dist.destroy_process_group()


@pytest.mark.slow  # 11-17 s in CI: two spawned processes, each compiling the module
def test_ddp_gradients_equal_full_batch_gradients(tmp_path):
    out = tmp_path / "grads.pt"
    mp.spawn(_worker, args=(str(tmp_path / "init"), str(out)), nprocs=WORLD, join=True)
    got = torch.load(out)
    model, x, y = make_mlp(batch=8)
    F.cross_entropy(model(x), y).backward()
    for n, p in model.named_parameters():
        torch.testing.assert_close(got[n], p.grad, rtol=1e-4, atol=1e-5)
