"""Test replica: gradients leave backward averaged over replicas on every step, whether the step
measures gradient noise (the SDK's own all-reduce) or not (DDP's), with accumulation and an
unused parameter under find_unused_parameters=True. Prints SYNC OK."""

import copy

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.utils.data import TensorDataset

import goodput.torch as gt


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Linear(4, 8)
        self.head = torch.nn.Linear(8, 3)
        self.unused = torch.nn.Linear(8, 3)  # never in the graph: its grad must stay None

    def forward(self, x):
        return self.head(torch.relu(self.body(x)))


def local_grad_sum(reference: torch.nn.Module, micro_batches) -> torch.Tensor:
    reference.zero_grad()
    for bx, by in micro_batches:
        F.cross_entropy(reference(bx), by).backward()
    return torch.cat([p.grad.reshape(-1) for p in reference.parameters() if p.grad is not None])


def assert_same_on_all_ranks(tensor: torch.Tensor) -> None:
    gathered = [torch.zeros_like(tensor) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, tensor)
    assert all(torch.equal(g, gathered[0]) for g in gathered), "gradients differ between ranks"


def main() -> None:
    torch.set_num_threads(1)
    runtime = gt.init()
    world = gt.world_size()
    runtime._proposed_spacing = lambda: (1, 3)  # measure every 3rd step, deterministically
    torch.manual_seed(0)
    x, y = torch.randn(384, 4), torch.randint(0, 3, (384,))
    net = Net()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.0)  # lr 0: weights stay comparable
    model = gt.AdaptiveDataParallel(net, optimizer, find_unused_parameters=True)
    reference = copy.deepcopy(net)
    loader = gt.AdaptiveDataLoader(TensorDataset(x, y), batch_size=32, local_bsz_bounds=(1, 8),
                                   gradient_accumulation=True)
    micro_steps = runtime.batch.accum_steps + 1
    assert micro_steps == 2, runtime.batch
    measured, ordinary, pending = 0, 0, []
    for bx, by in loader:
        pending.append((bx, by))
        measuring = runtime.is_measure_step()
        optimizer.zero_grad(set_to_none=True)
        F.cross_entropy(model(bx), by).backward()
        if len(pending) < micro_steps:
            optimizer.step()
            continue
        # backward returned: the gradients are already the global mean, the same on every rank
        got = torch.cat([p.grad.reshape(-1) for p in net.parameters() if p.grad is not None])
        assert_same_on_all_ranks(got)
        expected = local_grad_sum(reference, pending) / micro_steps
        dist.all_reduce(expected)
        expected /= world
        assert net.unused.weight.grad is None and net.unused.bias.grad is None
        assert torch.allclose(got, expected, atol=1e-6), (measuring, (got - expected).abs().max())
        optimizer.step()
        if measuring:
            assert model.last_noise_sample is not None
            measured += 1
        else:
            assert model.last_noise_sample is None
            ordinary += 1
        pending = []
    assert measured >= 2 and ordinary >= 2, (measured, ordinary)
    print(f"SYNC OK rank={gt.rank()} measured={measured} ordinary={ordinary}", flush=True)


if __name__ == "__main__":
    main()
