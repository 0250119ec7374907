"""Test replica: one optimizer step with accumulation through the SDK, checked against a plain
re-computation of the same gradients (local |g|^2 before all-reduce, |g_bar|^2 after, and the
parameter update with the LR factor). Prints PROBE OK."""

import copy

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.utils.data import TensorDataset

import goodput.torch as gt


def flat_grad(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    model.zero_grad()
    F.cross_entropy(model(x), y).backward()
    return torch.cat([p.grad.reshape(-1) for p in model.parameters()]).clone()


def main() -> None:
    torch.set_num_threads(1)
    runtime = gt.init()
    world = gt.world_size()
    torch.manual_seed(0)
    x, y = torch.randn(64, 4), torch.randint(0, 3, (64,))
    net = torch.nn.Linear(4, 3)
    reference = copy.deepcopy(net)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    model = gt.AdaptiveDataParallel(net, optimizer)
    loader = gt.AdaptiveDataLoader(TensorDataset(x, y), batch_size=32, local_bsz_bounds=(1, 8),
                                   gradient_accumulation=True)
    micro_steps = runtime.batch.accum_steps + 1
    assert runtime.batch.local_bsz == 8 and micro_steps * 8 * world == 32, runtime.batch
    micro_grads = []
    for micro, (bx, by) in enumerate(loader):
        micro_grads.append(flat_grad(reference, bx, by))
        optimizer.zero_grad()
        F.cross_entropy(model(bx), by).backward()
        optimizer.step()
        if micro == micro_steps - 1:
            break
    sample = model.last_noise_sample
    local_mean = torch.stack(micro_grads).mean(0)
    if world > 1:
        gathered = [torch.zeros_like(local_mean) for _ in range(world)]
        dist.all_gather(gathered, local_mean)
        global_mean = torch.stack(gathered).mean(0)
        expected_small = local_mean.dot(local_mean)
        assert (sample.small_batch, sample.total_batch) == (8 * micro_steps, 32)
    else:
        global_mean = local_mean
        expected_small = micro_grads[0].dot(micro_grads[0])
        assert (sample.small_batch, sample.total_batch) == (8, 32)
    expected_total = global_mean.dot(global_mean)
    assert torch.allclose(torch.as_tensor(sample.small_sqr), expected_small, rtol=1e-4), \
        (sample.small_sqr, expected_small)
    assert torch.allclose(torch.as_tensor(sample.total_sqr), expected_total, rtol=1e-4), \
        (sample.total_sqr, expected_total)
    start = torch.cat([p.reshape(-1) for p in reference.parameters()]).detach()
    after = torch.cat([p.reshape(-1) for p in net.parameters()]).detach()
    expected_after = start - 0.1 * model.last_lr_factor * global_mean
    assert torch.allclose(after, expected_after, atol=1e-6), (after - expected_after).abs().max()
    print(f"PROBE OK rank={gt.rank()} small={float(sample.small_sqr):.6f} "
          f"total={float(sample.total_sqr):.6f}", flush=True)


if __name__ == "__main__":
    main()
