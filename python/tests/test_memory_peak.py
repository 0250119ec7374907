"""Report entries carry `memory_peak_bytes` (docs/contract.md): the CUDA allocator's peak since
the previous step, which `goodput profile` fits as memory per sample on GPUs. Measured only on
CUDA: this machine has no GPU, so here the tests check that a CPU job reports none (and does
not initialize CUDA to find out) and how entries fold the per-step peaks."""

import torch

from conftest import step_record
from contract_server import validate_body
from goodput.torch.report_client import aggregate_steps
from goodput.torch.step_reporting import _gpu_memory_peak_bytes


def test_a_cpu_job_reports_no_gpu_memory_and_leaves_cuda_uninitialized():
    assert _gpu_memory_peak_bytes() is None
    assert not torch.cuda.is_initialized()


def test_an_entry_holds_the_largest_peak_of_its_steps_and_omits_it_when_unknown():
    base = step_record()
    [entry] = aggregate_steps([dict(base, memory_peak_bytes=5 << 20),
                               dict(base, step=2, memory_peak_bytes=7 << 20),
                               dict(base, step=3)])
    assert entry["memory_peak_bytes"] == 7 << 20
    [entry] = aggregate_steps([base])
    assert "memory_peak_bytes" not in entry
    assert validate_body({"attempt": 0, "reports": [entry]}) is None
    assert validate_body({"attempt": 0, "reports": [dict(entry, memory_peak_bytes=-1)]}) is not None
