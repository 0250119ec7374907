import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BackendNode } from '../../backends/backend.js';
import type { NodeInfo } from '../../core/cluster.js';
import { job } from '../../policy/goodput/test-jobs.js';
import { createPolicy } from '../../policy/registry.js';
import { avoidMarkedNodes } from './mark-preference.js';
import { toGroups, toMachines, typedInventory } from './typed-nodes.js';

const machine = (name: string, n: number, gpu = 'A100'): BackendNode => ({
  name,
  address: name,
  devices: Array.from({ length: n }, (_, index) => ({ index, kind: 'gpu' as const, name: gpu })),
  usable: n,
  note: '',
});

const node = (index: number, gpus: number, gpu_type = 'a100'): NodeInfo => ({
  index,
  name: `n${index}`,
  gpus,
  preemptible: false,
  gpu_type,
});

describe('the policy nodes in mark order', () => {
  it('lists nodes with marked devices after the others, stable, and maps stored allocations by machine', () => {
    const machines = [machine('a', 4), machine('b', 4), machine('c', 4), machine('d', 2)];
    assert.deepEqual(typedInventory(machines, []), typedInventory(machines), 'no marks: the machines order');
    const inv = typedInventory(machines, [
      { node: 'a', device: 1 },
      { node: 'a', device: 2 },
      { node: 'c', device: 0 },
    ]);
    assert.deepEqual(
      inv.nodes.map((n) => [n.index, n.name, n.gpus]),
      [
        [0, 'b', 4],
        [1, 'd', 2],
        [2, 'c', 4],
        [3, 'a', 4],
      ],
    );
    assert.deepEqual(
      inv.groups.map((g) => g.marked),
      [0, 0, 1, 2],
    );
    // A job stored on machine 0 (a) is on policy node 3, and back.
    assert.deepEqual(toGroups(inv, [0, 0], [0, 3]), [3, 3]);
    assert.deepEqual(toMachines(inv, [3, 3, 0]), [0, 0, 1]);
  });

  it('counts a mark on the group of its device only', () => {
    const mixed: BackendNode = {
      ...machine('m', 2),
      devices: [
        { index: 0, kind: 'gpu', name: 'A100' },
        { index: 1, kind: 'gpu', name: 'T4' },
      ],
    };
    const inv = typedInventory([mixed], [{ node: 'm', device: 0 }]);
    assert.deepEqual(
      inv.nodes.map((n) => n.name),
      ['m/T4', 'm/A100'],
    );
  });
});

describe('avoidMarkedNodes', () => {
  const nodes = [node(0, 4), node(1, 4), node(2, 4), node(3, 2), node(4, 4, 't4')];
  const marked = [false, false, true, false, false];

  it('answers the decision itself without marks', () => {
    const decided = { j: [2, 2] };
    assert.equal(avoidMarkedNodes(nodes, [false, false, false, false, false], {}, decided), decided);
  });

  it('moves a new placement off a marked node to an equal node nobody holds or gets', () => {
    // Node 0 is held by `old`; node 1 is free and equal to the marked node 2.
    const held = { old: [0, 0, 0, 0], j: [] };
    assert.deepEqual(avoidMarkedNodes(nodes, marked, held, { old: [0, 0, 0, 0], j: [2, 2, 2, 2] }), {
      old: [0, 0, 0, 0],
      j: [1, 1, 1, 1],
    });
    // The other job of the decision gets node 1: no equal node is free, the marked one is kept.
    assert.deepEqual(avoidMarkedNodes(nodes, marked, held, { old: [0, 0, 0, 0], k: [1], j: [2, 2] }), {
      old: [0, 0, 0, 0],
      k: [1],
      j: [2, 2],
    });
  });

  it('never moves replicas a job holds, nor to a node of another size or type', () => {
    const decided = { run: [2, 2, 2], grow: [2] };
    const held = { run: [2, 2], grow: [] as number[] };
    assert.deepEqual(avoidMarkedNodes(nodes, marked, held, decided), { run: [2, 2, 2], grow: [0] });
    // Every other 4-device a100 node marked: node 3 has 2 devices, node 4 is a t4.
    assert.deepEqual(avoidMarkedNodes(nodes, [true, true, true, false, false], {}, { j: [2, 2] }), { j: [2, 2] });
  });

  it('keeps a job on its own unmarked node when the decision moves it to an equal marked one', () => {
    // `run` holds 2 devices of node 1; the decision grows it to 4 on the marked node 2.
    const held = { run: [1, 1], old: [0, 0, 0, 0] };
    assert.deepEqual(avoidMarkedNodes(nodes, marked, held, { run: [2, 2, 2, 2], old: [0, 0, 0, 0] }), {
      run: [1, 1, 1, 1],
      old: [0, 0, 0, 0],
    });
  });

  it("makes Pollux's choice between equal free nodes, random by seed, the unmarked node", async () => {
    const equal = [node(0, 4), node(1, 4)];
    const raw: number[] = [];
    for (let seed = 0; seed < 20; seed++) {
      const pollux = await createPolicy('pollux', { seed });
      const gang = job('g', { min_replicas: 4, max_replicas: 4 });
      const { allocations } = pollux.decide({ now_s: 100, nodes: equal, jobs: [gang], allocations: {} });
      assert.equal(new Set(allocations.g).size, 1, 'one node');
      raw.push(allocations.g![0]!);
      assert.deepEqual(avoidMarkedNodes(equal, [true, false], {}, allocations).g, [1, 1, 1, 1]);
    }
    assert.ok(raw.includes(0) && raw.includes(1), `the search picks either node: ${raw.join(' ')}`);
  });
});
