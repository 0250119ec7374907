import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { packagePath } from '../../util/package-root.js';
import { ncclFindings } from '../findings/comm-findings.js';
import { parseNcclLog } from './nccl-log.js';

const log = () =>
  readFileSync(packagePath('fixtures', 'doctor', 'nccl', 'p4d-2node-16xA100-efa-allreduce.log'), 'utf8');

describe('NCCL_DEBUG=INFO log (p4d 2 nodes x 8 A100, EFA, mpirun-prefixed)', () => {
  const l = parseNcclLog(log());

  it('reads version, network, ranks and hosts', () => {
    assert.equal(l.version, '2.9.9+cuda11.2');
    assert.equal(l.network, 'AWS Libfabric');
    assert.equal(l.ofi_provider, 'efa');
    assert.equal(l.bootstrap_interface, 'eth0');
    assert.equal(l.nranks, 16);
    assert.equal(l.rank_host.get(0), 'nccl-tests-efa-16-worker-0');
    assert.equal(l.rank_host.get(15), 'nccl-tests-efa-16-worker-1');
    assert.equal(new Set(l.rank_host.values()).size, 2);
  });

  it('counts per-channel transports: P2P/IPC inside a node, NET/AWS Libfabric with GDRDMA across nodes', () => {
    assert.deepEqual(l.transports, { 'P2P/IPC': 256, 'NET/AWS Libfabric': 64 });
    assert.equal(l.connections.filter((c) => c.gdrdma).length, 64);
    const cross = l.connections.filter((c) => l.rank_host.get(c.from) !== l.rank_host.get(c.to));
    assert.ok(cross.length === 64 && cross.every((c) => c.transport === 'NET/AWS Libfabric'));
    assert.equal(l.ring_channels, 8);
  });

  it('reads the nccl-tests table and the average bus bandwidth', () => {
    assert.equal(l.avg_bus_bandwidth_gbps, 11.2432);
    assert.equal(l.test_rows.length, 30);
    assert.deepEqual(l.test_rows[0], {
      size_bytes: 8,
      count: 2,
      type: 'float',
      redop: 'sum',
      time_us: 179.1,
      algbw_gbps: 0,
      busbw_gbps: 0,
      inplace_time_us: 176.3,
      inplace_algbw_gbps: 0,
      inplace_busbw_gbps: 0,
    });
    const last = l.test_rows[29]!;
    assert.deepEqual(
      [last.size_bytes, last.time_us, last.algbw_gbps, last.busbw_gbps, last.inplace_busbw_gbps],
      [4294967296, 183834, 23.36, 43.81, 43.72],
    );
  });

  it('finds nothing wrong with the healthy EFA run, but reports its bandwidth', () => {
    const ids = ncclFindings(l, 'x').map((f) => f.id);
    assert.deepEqual(ids, ['nccl.bus-bandwidth']);
  });
});

describe('NCCL problems', () => {
  const torchrun = [
    '[default0]:node-a:100:200 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>',
    '[default0]:node-a:100:200 [0] NCCL INFO NET/IB : No device found.',
    '[default0]:node-a:100:200 [0] NCCL INFO Using network Socket',
    '[default0]:NCCL version 2.18.3+cuda12.1',
    '[default0]:node-a:100:200 [0] NCCL INFO comm 0x1 rank 0 nranks 4 cudaDev 0 busId 1000 - Init COMPLETE',
    '[default1]:node-a:101:201 [1] NCCL INFO comm 0x2 rank 1 nranks 4 cudaDev 1 busId 2000 - Init COMPLETE',
    '[default0]:node-b:100:200 [0] NCCL INFO comm 0x3 rank 2 nranks 4 cudaDev 0 busId 1000 - Init COMPLETE',
    '[default0]:node-a:100:200 [0] NCCL INFO Channel 00/0 : 0[1000] -> 1[2000] via SHM/direct/direct',
    '[default0]:node-a:101:201 [1] NCCL INFO Channel 00/0 : 1[2000] -> 2[1000] [send] via NET/Socket/0',
    '[default0]:node-a:100:200 [0] NCCL INFO Channel 01/0 : 3[2000] -> 0[1000] [receive] via NET/IB/0',
    '[default0]:node-a:100:200 [0] NCCL WARN Error while creating shared memory segment /dev/shm/nccl-abc (size 9637888)',
    '[rank1]:[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE) ran for 1800000 milliseconds before timing out.',
  ].join('\n');

  it('recognises sockets across nodes, SHM inside a node, missing GDRDMA and known failures', () => {
    const l = parseNcclLog(torchrun);
    assert.equal(l.version, '2.18.3+cuda12.1');
    assert.deepEqual(l.transports, { SHM: 1, 'NET/Socket': 1, 'NET/IB': 1 });
    assert.deepEqual(l.issues.map((i) => i.id).sort(), ['ib-error', 'shm-too-small', 'watchdog-timeout']);
    const ids = ncclFindings(l, 'log').map((f) => f.id);
    for (const id of [
      'nccl.cross-node-over-sockets',
      'nccl.intra-node-not-p2p',
      'nccl.no-gpudirect-rdma',
      'nccl.shm-too-small',
      'nccl.watchdog-timeout',
      'nccl.ib-error',
    ]) {
      assert.ok(ids.includes(id), `${id} in ${ids.join(', ')}`);
    }
  });

  it('reads the older "Ring" connection lines quoted in the design notes', () => {
    const l = parseNcclLog(
      'h:1:1 [0] NCCL INFO Ring 00 : 0[0] -> 1[1] via P2P/IPC\nh:1:1 [0] NCCL INFO Ring 01 : 16 -> 0 [send] via NET/IB/0',
    );
    assert.deepEqual(l.transports, { 'P2P/IPC': 1, 'NET/IB': 1 });
    assert.deepEqual(
      l.connections.map((c) => [c.channel, c.from, c.to, c.gdrdma]),
      [
        [0, 0, 1, false],
        [1, 16, 0, false],
      ],
    );
  });

  it('recognises a missing socket interface', () => {
    const l = parseNcclLog('host:1:1 [0] NCCL WARN Bootstrap : no socket interface found');
    assert.deepEqual(
      l.issues.map((i) => i.id),
      ['no-socket-interface'],
    );
    assert.ok(ncclFindings(l, 'x')[0]!.fix.some((f) => f.includes('NCCL_SOCKET_IFNAME')));
  });
});
