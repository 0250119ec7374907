import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BackendNode } from '../../backends/backend.js';
import { cpuSlots, parseNvidiaSmi } from '../../backends/local/devices.js';
import { buildInventory, parseGres, parseSinfo, parseSqueue, type SlurmNode } from '../../backends/slurm/inventory.js';
import type { ClusterSnapshot, PolicyJob } from '../../core/cluster.js';
import { capturedGpu, queryOutput } from '../../../test-support/control/nvidia-smi-captures.js';
import { confineToOneType, keepPinned } from '../../policy/typed.js';
import { isMixed, toGroups, toMachines, typedInventory } from './typed-nodes.js';

const machine = (name: string, devices: BackendNode['devices'], usable = devices.length): BackendNode => ({
  name,
  address: name,
  devices,
  usable,
  note: '',
});

describe('typed inventory', () => {
  it('reads the recorded nvidia-smi output of an H100 machine: one node of type "NVIDIA H100 80GB HBM3"', () => {
    assert.equal(queryOutput(['h100']), '0, GPU-00000000-0000-0000-0000-000000000000, NVIDIA H100 80GB HBM3, 81559\n');
    const inv = typedInventory([machine('local', parseNvidiaSmi(queryOutput(['h100', 'h100'])))]);
    assert.deepEqual(inv.nodes, [
      { index: 0, name: 'local', gpus: 2, preemptible: false, gpu_type: 'NVIDIA H100 80GB HBM3' },
    ]);
    assert.equal(isMixed(inv), false);
  });

  it('a machine with two kinds of GPU (recorded H100 and L40S rows) is two nodes of two types', () => {
    const devices = parseNvidiaSmi(queryOutput(['h100', 'l40s', 'h100', 'l40s']));
    const inv = typedInventory([machine('local', devices)]);
    assert.deepEqual(
      inv.nodes.map((n) => [n.index, n.name, n.gpus, n.gpu_type]),
      [
        [0, 'local/NVIDIA H100 80GB HBM3', 2, capturedGpu('h100').name],
        [1, 'local/NVIDIA L40S', 2, 'NVIDIA L40S'],
      ],
    );
    assert.deepEqual(
      inv.groups.map((g) => g.usable),
      [
        [0, 2],
        [1, 3],
      ],
    );
    assert.equal(isMixed(inv), true);
    // A job on devices 1 and 3 of machine 0 is on the L40S group, and back.
    assert.deepEqual(toGroups(inv, [0, 0], [1, 3]), [1, 1]);
    assert.deepEqual(toMachines(inv, [1, 1]), [0, 0]);
  });

  it('homogeneous machines map one to one, as before types (CPU slots are type cpu)', () => {
    const inv = typedInventory([machine('a', cpuSlots(3), 2), machine('b', cpuSlots(2))]);
    assert.deepEqual(inv.nodes, [
      { index: 0, name: 'a', gpus: 2, preemptible: false, gpu_type: 'cpu' },
      { index: 1, name: 'b', gpus: 2, preemptible: false, gpu_type: 'cpu' },
    ]);
    assert.deepEqual(toGroups(inv, [0, 1, 1], [1, 0, 1]), [0, 1, 1]);
    // A device the inventory no longer lists stays on its machine.
    assert.deepEqual(toGroups(inv, [1], [7]), [1]);
  });

  it('Slurm nodes with typed GRES (gpu:a100:4, gpu:t4:4) are two typed nodes', () => {
    assert.deepEqual(parseGres('gpu:a100:4(S:0-1)'), { count: 4, type: 'a100', types: [{ type: 'a100', count: 4 }] });
    const node = (name: string, type: string): SlurmNode => ({
      name,
      address: name,
      gpus: 4,
      gpu_type: type,
      cpus: 8,
      state: 'idle',
      flags: [],
      partitions: ['gpu'],
      reason: '',
    });
    const { nodes } = buildInventory([], [node('gp1', 'a100'), node('gp2', 't4')], [], () => true);
    const inv = typedInventory(nodes);
    assert.deepEqual(
      inv.nodes.map((n) => [n.name, n.gpus, n.gpu_type]),
      [
        ['gp1', 4, 'a100'],
        ['gp2', 4, 't4'],
      ],
    );
    assert.equal(isMixed(inv), true);
  });

  it('a node with two GRES types (gpu:a100:2,gpu:t4:2) is two typed groups; GPUs other jobs hold are taken off their type', () => {
    // As sinfo --json and squeue --json (22.05) print a node configured with Gres=gpu:a100:2,gpu:t4:2.
    const nodes = parseSinfo(
      JSON.stringify({
        nodes: [
          {
            name: 'gp1',
            hostname: 'gp1',
            address: '10.0.0.1',
            state: 'mixed',
            state_flags: [],
            gres: 'gpu:a100:2(S:0),gpu:t4:2(S:1)',
            gres_used: 'gpu:a100:1(IDX:0),gpu:t4:0(IDX:N/A)',
            cpus: 16,
            partitions: ['gpu'],
            reason: '',
          },
        ],
      }),
    );
    assert.deepEqual(nodes[0]!.gpu_types, [
      { type: 'a100', count: 2 },
      { type: 't4', count: 2 },
    ]);
    const jobs = parseSqueue(
      JSON.stringify({
        jobs: [
          {
            job_id: 1,
            name: 'foreign',
            job_state: 'RUNNING',
            nodes: 'gp1',
            gres_detail: ['gpu:a100:1(IDX:0)'],
            het_job_id: 0,
            state_reason: 'None',
          },
        ],
      }),
    );
    const { nodes: inv } = buildInventory([], nodes, jobs, () => false);
    assert.deepEqual(
      inv[0]!.devices.map((d) => [d.index, d.name]),
      [
        [0, 'a100'],
        [2, 't4'],
        [3, 't4'],
        [1, 'a100'],
      ],
      'free devices of each type first, one a100 held last (Goodput numbers devices itself; Slurm picks the physical GPU of the type)',
    );
    assert.equal(inv[0]!.usable, 3);
    const typed = typedInventory(inv);
    assert.deepEqual(
      typed.nodes.map((n) => [n.name, n.gpus, n.gpu_type]),
      [
        ['gp1/a100', 1, 'a100'],
        ['gp1/t4', 2, 't4'],
      ],
    );
    const idle = typedInventory(buildInventory([], nodes, [], () => false).nodes);
    assert.deepEqual(
      idle.nodes.map((n) => [n.name, n.gpus]),
      [
        ['gp1/a100', 2],
        ['gp1/t4', 2],
      ],
    );
  });
});

describe('one type per job', () => {
  const nodes = [
    { index: 0, name: 'a', gpus: 4, preemptible: false, gpu_type: 'a100' },
    { index: 1, name: 'b', gpus: 4, preemptible: false, gpu_type: 't4' },
  ];

  it("a type-unaware policy's job keeps the type holding most of its replicas; below its minimum it gets none", () => {
    const out = confineToOneType(
      nodes,
      new Map([
        ['x', 1],
        ['g', 6],
      ]),
      { x: [0, 1, 1], g: [0, 0, 0, 1, 1, 1], y: [1, 1] },
    );
    assert.deepEqual(out, { x: [1, 1], y: [1, 1] });
  });

  it('a job that may not be stopped keeps its allocation; a job it would over-commit loses its own', () => {
    const job = (id: string, preemptible: boolean): PolicyJob => ({
      id,
      submitted_at_s: 0,
      attained_service_gpu_s: 0,
      min_replicas: 0,
      max_replicas: 4,
      max_profiled_replicas: 1,
      restarts: 0,
      preemptible,
      priority: 0,
      limits: { init_batch_size: 32, max_batch_size: 32, min_local_bsz: 1, max_local_bsz: 32, accumulation: false },
    });
    const s: ClusterSnapshot = {
      now_s: 0,
      nodes,
      jobs: [job('pinned', false), job('other', true)],
      allocations: { pinned: [0, 0] },
    };
    assert.deepEqual(keepPinned(s, { other: [0, 0, 0] }), { pinned: [0, 0] });
    assert.deepEqual(keepPinned(s, { pinned: [1], other: [0, 0] }), { pinned: [0, 0], other: [0, 0] });
  });
});
