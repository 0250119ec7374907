import type { HorovodTimeline } from '../parse/horovod-timeline.js';
import type { NcclLog } from '../parse/nccl-log.js';
import type { Finding } from './finding.js';
import { fmtPct, fmtUs } from './finding.js';

const ISSUE_FIX: Readonly<Record<string, { title: string; fix: string[]; bottleneck: Finding['bottleneck'] }>> = {
  'shm-too-small': {
    title: 'NCCL could not allocate shared memory: /dev/shm is too small (typical in containers)',
    fix: [
      'docker run --shm-size=1g (or more) --ulimit memlock=-1 --ulimit stack=67108864 ...',
      'Kubernetes: mount an emptyDir with medium: Memory at /dev/shm',
      'Or run the container with --ipc=host',
    ],
    bottleneck: 'system',
  },
  'no-socket-interface': {
    title: 'NCCL found no usable socket interface for bootstrap',
    fix: [
      'Name the interface explicitly: NCCL_SOCKET_IFNAME=eth0 (or ens5, bond0 ...; "ip addr" ' +
        'lists them); exclude docker/lo with NCCL_SOCKET_IFNAME=^docker0,lo',
    ],
    bottleneck: 'communication',
  },
  'ib-error': {
    title: 'InfiniBand errors or no IB device: NCCL may fall back to TCP sockets',
    fix: [
      'Check the HCAs with ibstat / ibv_devinfo; set NCCL_IB_HCA=mlx5 (the devices in nvidia-smi topo -m)',
      'NCCL_IB_DISABLE=0 where IB exists; on cloud Ethernet without IB set NCCL_IB_DISABLE=1 and NCCL_SOCKET_IFNAME',
      'Raise NCCL_IB_TIMEOUT=22 on large fabrics with retry errors',
    ],
    bottleneck: 'communication',
  },
  'watchdog-timeout': {
    title: 'A collective timed out (NCCL watchdog): a rank hung or fell far behind',
    fix: [
      'Find the straggler: TORCH_DISTRIBUTED_DEBUG=DETAIL and NCCL_DEBUG=INFO on all ranks',
      'Make failures fast and visible: TORCH_NCCL_ASYNC_ERROR_HANDLING=1; set ' +
        'timeout=datetime.timedelta(minutes=30) in init_process_group only if steps are genuinely ' +
        'long',
      'Check that every rank runs the same collectives in the same order (data-dependent branches cause hangs)',
    ],
    bottleneck: 'communication',
  },
  'connection-refused': {
    title: 'NCCL/bootstrap connections were refused or reset between nodes',
    fix: [
      'Open the ports between nodes (security groups / firewall) and pin the interface with NCCL_SOCKET_IFNAME',
      'Check that MASTER_ADDR / --rdzv_endpoint resolve to the same address on every node',
    ],
    bottleneck: 'communication',
  },
  'system-error': {
    title: 'NCCL reported an unhandled system or CUDA error',
    fix: [
      'Re-run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET to see the failing call',
      'Check ulimit -l (memlock) and /dev/shm size in containers',
    ],
    bottleneck: 'system',
  },
};

/** Findings from an NCCL_DEBUG=INFO log (with or without nccl-tests output). Pure. */
export function ncclFindings(log: NcclLog, src: string): Finding[] {
  const out: Finding[] = [];
  const hosts = new Set(log.rank_host.values());
  const sameHost = (a: number, b: number) => log.rank_host.has(a) && log.rank_host.get(a) === log.rank_host.get(b);
  const cross = log.connections.filter(
    (c) => log.rank_host.has(c.from) && log.rank_host.has(c.to) && !sameHost(c.from, c.to),
  );
  const intra = log.connections.filter((c) => sameHost(c.from, c.to));
  const netFamilies = [...new Set(cross.map((c) => c.transport))];
  const summary = Object.entries(log.transports)
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ');
  if (cross.some((c) => c.transport === 'NET/Socket') || (hosts.size > 1 && log.network === 'Socket')) {
    out.push({
      id: 'nccl.cross-node-over-sockets',
      severity: 'critical',
      bottleneck: 'communication',
      title: 'Cross-node NCCL traffic runs over TCP sockets instead of InfiniBand/EFA RDMA',
      evidence: [
        `network: ${log.network ?? 'unknown'}; cross-node connections: ${cross.length} (${netFamilies.join(', ')})`,
        `transports: ${summary}`,
      ],
      fix: [
        'With InfiniBand: NCCL_IB_DISABLE=0 NCCL_IB_HCA=mlx5; check ibstat',
        'On AWS: install aws-ofi-nccl and use EFA (FI_PROVIDER=efa, FI_EFA_USE_DEVICE_RDMA=1)',
        'If only Ethernet exists, use 25-100 GbE and NCCL_SOCKET_IFNAME=<fast NIC>, NCCL_SOCKET_NTHREADS=4 NCCL_NSOCKS_PERTHREAD=4',
      ],
      impact_pct: 30,
      source: src,
    });
  }
  const badIntra = intra.filter((c) => !c.transport.startsWith('P2P'));
  if (badIntra.length > 0) {
    const kinds = [...new Set(badIntra.map((c) => c.transport))];
    out.push({
      id: 'nccl.intra-node-not-p2p',
      severity: 'warning',
      bottleneck: 'communication',
      title: `${badIntra.length} intra-node NCCL connections use ${kinds.join('/')} instead of P2P/NVLink`,
      evidence: [
        `transports: ${summary}`,
        ...badIntra
          .slice(0, 3)
          .map(
            (c) =>
              `channel ${c.channel}: ${c.from} -> ${c.to} via ${c.transport} (same host ${log.rank_host.get(c.from)})`,
          ),
      ],
      fix: [
        'Containers: run with --ipc=host (CUDA IPC needs a shared IPC namespace) and do not set NCCL_P2P_DISABLE',
        'Check nvidia-smi topo -m: GPUs behind different CPU sockets (SYS) fall back to SHM; choose GPUs on one NVLink island',
        'On PCIe switches disable ACS in BIOS so peer-to-peer works',
      ],
      impact_pct: 10,
      source: src,
    });
  }
  const net = log.connections.filter((c) => c.transport.startsWith('NET/') && c.transport !== 'NET/Socket');
  const noGdr = net.filter((c) => !c.gdrdma);
  if (noGdr.length > 0) {
    out.push({
      id: 'nccl.no-gpudirect-rdma',
      severity: 'warning',
      bottleneck: 'communication',
      title: `${noGdr.length} of ${net.length} network connections do not use GPUDirect RDMA (data bounces through host memory)`,
      evidence: noGdr
        .slice(0, 3)
        .map((c) => `channel ${c.channel}: ${c.from} -> ${c.to} via ${c.transport} (no /GDRDMA)`),
      fix: [
        'Load the peer-memory module: sudo modprobe nvidia-peermem (older stacks: nv_peer_mem)',
        'Allow GDR over the host bridge when GPU and NIC are not on one switch: NCCL_NET_GDR_LEVEL=PHB',
        'Check GPU-NIC placement with nvidia-smi topo -m',
      ],
      impact_pct: 8,
      source: src,
    });
  }
  for (const issue of log.issues) {
    const info = ISSUE_FIX[issue.id];
    if (!info) continue;
    out.push({
      id: `nccl.${issue.id}`,
      severity: 'critical',
      bottleneck: info.bottleneck,
      title: info.title,
      evidence: [`line ${issue.line}: ${issue.text}`],
      fix: info.fix,
      impact_pct: 25,
      source: src,
    });
  }
  if (log.avg_bus_bandwidth_gbps !== undefined || log.test_rows.length > 0) {
    const peak = log.test_rows.reduce((m, r) => Math.max(m, r.busbw_gbps, r.inplace_busbw_gbps), 0);
    const largest = log.test_rows[log.test_rows.length - 1];
    out.push({
      id: 'nccl.bus-bandwidth',
      severity: 'info',
      bottleneck: 'communication',
      title:
        `nccl-tests: average bus bandwidth ${log.avg_bus_bandwidth_gbps ?? '?'} GB/s, peak ` +
        `${peak.toFixed(2)} GB/s over ${log.nranks ?? '?'} ranks on ${hosts.size || '?'} node(s)`,
      evidence: [
        `network ${log.network ?? 'unknown'}` +
          `${log.ofi_provider ? ` (provider ${log.ofi_provider})` : ''}, NCCL ${log.version ?? '?'}; ` +
          `transports: ${summary}`,
        ...(largest
          ? [
              `largest message ${(largest.size_bytes / 2 ** 20).toFixed(0)} MiB: algbw ${largest.algbw_gbps} GB/s, busbw ${largest.busbw_gbps} GB/s`,
            ]
          : []),
        'The average includes small messages, which are latency-bound; compare the large-message ' +
          'busbw with the fabric (e.g. 4x100 Gb/s EFA = 50 GB/s per node)',
      ],
      fix: [
        'Keep gradient buckets large (DDP bucket_cap_mb=25-100) so all-reduces run in the bandwidth-bound regime',
        'Re-run nccl-tests after changing NCCL settings to confirm the gain',
      ],
      impact_pct: 0,
      source: src,
    });
  }
  return out;
}

/** Findings from a Horovod timeline. Pure. */
export function horovodFindings(t: HorovodTimeline, src: string): Finding[] {
  const out: Finding[] = [];
  const late = t.ranks.filter((r) => r.times_last > 0).sort((a, b) => b.mean_delay_us - a.mean_delay_us);
  if (late.length > 0 && late[0]!.mean_delay_us >= 1000) {
    out.push({
      id: 'horovod.straggler-rank',
      severity: late[0]!.mean_delay_us >= 50_000 ? 'critical' : 'warning',
      bottleneck: 'communication',
      title:
        `Horovod: rank ${late[0]!.rank} is last to be ready in ${late[0]!.times_last} ` +
        `negotiations, ${fmtUs(late[0]!.mean_delay_us)} after the first rank on average`,
      evidence: t.ranks.map(
        (r) =>
          `rank ${r.rank}: ${r.negotiations} negotiations, mean delay ${fmtUs(r.mean_delay_us)}, max ` +
          `${fmtUs(r.max_delay_us)}, last ${r.times_last} time(s)`,
      ),
      fix: [
        'Find why that rank is slow: its tf.data/DataLoader pipeline, a throttled GPU, or a busy host (check nvidia-smi on its node)',
        'Bind ranks to the socket of their GPU: mpirun --map-by socket -np <GPUs>',
        'Tune tensor fusion: HOROVOD_FUSION_THRESHOLD=67108864 HOROVOD_CYCLE_TIME=5',
      ],
      impact_pct: Math.min(50, late[0]!.mean_delay_us / 10_000),
      source: src,
    });
  }
  const total = Object.values(t.phase_us).reduce((a, b) => a + b, 0);
  if (total > 0) {
    const parts = Object.entries(t.phase_us)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k}: ${fmtUs(v)} (${fmtPct((100 * v) / total)})`);
    const memcpy = (t.phase_us['MEMCPY_IN_FUSION_BUFFER'] ?? 0) + (t.phase_us['MEMCPY_OUT_FUSION_BUFFER'] ?? 0);
    const wait = t.phase_us['WAIT_FOR_DATA'] ?? 0;
    out.push({
      id: 'horovod.time-by-phase',
      severity: 'info',
      bottleneck: wait > memcpy ? 'input-pipeline' : 'communication',
      title: `Horovod activity time: ${parts[0]}`,
      evidence: [
        ...parts,
        `${t.tensors} tensors, ${t.cycles} cycles, ${t.events} events${t.truncated ? ' (timeline not terminated: job still running or killed)' : ''}`,
      ],
      fix: [
        'Long NEGOTIATE_*: ranks reach the all-reduce at different times (stragglers); long ' +
          'WAIT_FOR_DATA: the backward pass or input pipeline is slow; long MEMCPY_*_FUSION_BUFFER: ' +
          'raise HOROVOD_FUSION_THRESHOLD or use fewer, larger tensors',
      ],
      impact_pct: 0,
      source: src,
    });
  }
  return out;
}
