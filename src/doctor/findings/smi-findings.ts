import type { NvidiaSmiData } from '../parse/nvidia-smi/capture.js';
import type { GpuSample } from '../parse/nvidia-smi/gpu-sample.js';
import type { ProcessSample } from '../parse/nvidia-smi/monitor.js';
import type { Topology } from '../parse/nvidia-smi/topo.js';
import { LINK_MEANING } from '../parse/nvidia-smi/topo.js';
import type { Finding } from './finding.js';
import { fmtPct } from './finding.js';

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** Mean SM clock shortfall below the maximum over the throttled samples, in percent (0 when clocks are unknown). */
function clockDeficitPct(samples: readonly GpuSample[]): number {
  const d = samples
    .filter((s) => s.clocks_sm_mhz !== undefined && s.clocks_max_sm_mhz)
    .map((s) => 100 * (1 - s.clocks_sm_mhz! / s.clocks_max_sm_mhz!));
  return d.length ? Math.max(0, mean(d)) : 0;
}
const GiB = 1024 ** 3;

function gpuKey(s: GpuSample): string {
  return s.uuid ?? s.bus_id ?? `index ${s.index ?? 0}`;
}

function label(s: readonly GpuSample[]): string {
  const named = s.find((x) => x.name);
  const idx = s.find((x) => x.index !== undefined)?.index;
  return `GPU ${idx ?? '?'}${named ? ` (${named.name})` : ''}`;
}

/** Samples grouped per physical GPU (by UUID, else bus id, else index); samples from an "idle" capture state are excluded. */
export function groupByGpu(samples: readonly GpuSample[]): Map<string, GpuSample[]> {
  const byIndex = new Map<number, string>();
  for (const s of samples) if (s.index !== undefined && (s.uuid || s.bus_id)) byIndex.set(s.index, gpuKey(s));
  const out = new Map<string, GpuSample[]>();
  for (const s of samples) {
    const key = s.uuid ?? s.bus_id ?? (s.index !== undefined ? byIndex.get(s.index) : undefined) ?? gpuKey(s);
    const list = out.get(key) ?? [];
    list.push(s);
    out.set(key, list);
  }
  return out;
}

function utilizationFindings(all: readonly GpuSample[], src: string, out: Finding[]): void {
  const busy = all.filter((s) => s.state !== 'idle');
  const util = busy.map((s) => s.utilization_gpu_pct).filter((x): x is number => x !== undefined);
  if (util.length === 0) return;
  const m = mean(util);
  const used = busy.map((s) => s.memory_used_bytes).filter((x): x is number => x !== undefined);
  const total = busy.find((s) => s.memory_total_bytes)?.memory_total_bytes;
  if (Math.max(...util) === 0) {
    const mem =
      total !== undefined && used.length > 0
        ? `, ${(Math.max(...used) / GiB).toFixed(2)} of ${(total / GiB).toFixed(1)} GiB memory held`
        : '';
    out.push({
      id: 'smi.gpu-unused',
      severity: 'info',
      bottleneck: 'system',
      title: `${label(all)}: no kernels ran while sampled (0% utilization)`,
      evidence: [
        `${util.length} sample(s) at 0% utilization${mem}`,
        'A snapshot of an idle GPU says nothing about the training loop; sample during training',
      ],
      fix: [
        'Capture nvidia-smi while training runs: nvidia-smi ' +
          '--query-gpu=timestamp,utilization.gpu,utilization.memory,memory.used,memory.total,power.draw,clocks.sm ' +
          '--format=csv -l 1 > gpu.csv',
      ],
      impact_pct: 0,
      source: src,
    });
    return;
  }
  if (m < 80) {
    out.push({
      id: 'smi.low-gpu-utilization',
      severity: m < 50 ? 'critical' : 'warning',
      bottleneck: 'input-pipeline',
      title: `${label(all)}: GPU utilization ${fmtPct(m)} on average (target: above 90% once training runs)`,
      evidence: [
        `${util.length} samples (${[...new Set(busy.map((s) => s.source))].join(', ')}): min ` +
          `${Math.min(...util)}%, mean ${m.toFixed(1)}%, max ${Math.max(...util)}%; ` +
          `${fmtPct((100 * util.filter((u) => u < 50).length) / util.length)} of samples below 50% ` +
          `(brief dips are normal, frequent ones are not)`,
        ...(total && used.length
          ? [`memory used ${(Math.max(...used) / GiB).toFixed(1)} of ${(total / GiB).toFixed(1)} GiB`]
          : []),
        'Low utilization with a running job usually means the GPU waits for the CPU or I/O (data loading, preprocessing, host syncs)',
      ],
      fix: [
        'Profile one step with the PyTorch profiler and run goodput doctor on the trace to see where the GPU waits',
        'DataLoader(num_workers=<cores per GPU>, pin_memory=True, persistent_workers=True, ' +
          'prefetch_factor=2); tf.data: .map(f, ' +
          'num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)',
        'If memory allows, raise the batch size so each kernel does more work',
      ],
      // The GPU idles (100 - mean utilization)% of the sampled time: at most that much could be removed.
      impact_pct: 100 - m,
      source: src,
    });
  }
  if (total && used.length && m >= 50) {
    const frac = Math.max(...used) / total;
    if (frac < 0.4) {
      out.push({
        id: 'smi.memory-headroom',
        severity: 'info',
        bottleneck: 'gpu-memory',
        title: `${label(all)}: only ${fmtPct(100 * frac)} of GPU memory used while busy; room for a larger batch`,
        evidence: [
          `peak memory used ${(Math.max(...used) / GiB).toFixed(1)} of ${(total / GiB).toFixed(1)} GiB at ${m.toFixed(0)}% utilization`,
        ],
        fix: [
          'Raise the per-GPU batch size until memory is nearly full (scale the learning rate with warm-up, or let goodput pick the batch size)',
        ],
        impact_pct: 0,
        source: src,
      });
    } else if (frac > 0.95) {
      out.push({
        id: 'smi.memory-nearly-full',
        severity: 'warning',
        bottleneck: 'gpu-memory',
        title: `${label(all)}: GPU memory ${fmtPct(100 * frac)} full: close to out-of-memory`,
        evidence: [`peak memory used ${(Math.max(...used) / GiB).toFixed(1)} of ${(total / GiB).toFixed(1)} GiB`],
        fix: [
          'Mixed precision (BF16/FP16) halves activation memory',
          'Activation checkpointing: torch.utils.checkpoint.checkpoint(block, x)',
          'Shard states with FSDP or DeepSpeed ZeRO',
          'Gradient accumulation: smaller micro-batches with the same effective batch',
        ],
        impact_pct: 0,
        source: src,
      });
    }
  }
}

function healthFindings(all: readonly GpuSample[], src: string, out: Finding[]): void {
  const name = label(all);
  const reasons = new Set(
    all.flatMap((s) => s.throttle_reasons ?? []).filter((r) => !/applications_clocks_setting|display_clock/.test(r)),
  );
  if (reasons.size > 0) {
    out.push({
      id: 'smi.clock-throttling',
      severity: [...reasons].some((r) => /hw_|thermal/.test(r)) ? 'critical' : 'warning',
      bottleneck: 'gpu-compute',
      title: `${name}: clocks throttled (${[...reasons].join(', ')})`,
      evidence: (() => {
        const hit = all.filter((s) => s.throttle_reasons?.length);
        const s = hit[hit.length - 1]!;
        return [
          `${hit.length} of ${all.length} samples with throttling active`,
          `latest: SM ${s.clocks_sm_mhz ?? '?'}` +
            `${s.clocks_max_sm_mhz ? ` of max ${s.clocks_max_sm_mhz}` : ''} MHz, power ` +
            `${s.power_draw_w ?? '?'} of ${s.power_limit_w ?? '?'} W` +
            `${s.temperature_gpu_c !== undefined ? `, ${s.temperature_gpu_c} C` : ''} (${s.source}` +
            `${s.state ? `, ${s.state}` : ''})`,
        ];
      })(),
      fix: [
        'Thermal: check airflow and fan/cooling; nvidia-smi -q -d TEMPERATURE,PERFORMANCE',
        'Power cap: check the limit (nvidia-smi -q -d POWER) and restore the default with sudo nvidia-smi -pl <default W>',
        'On dedicated servers pin application clocks: sudo nvidia-smi -ac <mem,graphics>',
      ],
      impact_pct: clockDeficitPct(all.filter((x) => x.throttle_reasons?.length)),
      source: src,
    });
  }
  const powerCapped = all.filter(
    (s) =>
      s.state !== 'idle' && s.power_draw_w !== undefined && s.power_limit_w && s.power_draw_w >= 0.97 * s.power_limit_w,
  );
  if (powerCapped.length > 0 && reasons.size === 0) {
    const s = powerCapped[0]!;
    out.push({
      id: 'smi.at-power-limit',
      severity: 'info',
      bottleneck: 'gpu-compute',
      title: `${name}: drawing ${s.power_draw_w} W of a ${s.power_limit_w} W limit`,
      evidence: [`${powerCapped.length} sample(s) at or above 97% of the power limit`],
      fix: ['Fine while fully busy; if the limit was lowered, restore it: sudo nvidia-smi -pl <default W>'],
      impact_pct: 0,
      source: src,
    });
  }
  if (all.some((s) => s.persistence_mode === false)) {
    out.push({
      id: 'smi.persistence-mode-off',
      severity: 'info',
      bottleneck: 'system',
      title: `${name}: persistence mode is off`,
      evidence: [
        'persistence_mode = Disabled: the driver is torn down when no process uses the GPU, adding start-up latency and clock swings',
      ],
      fix: ['sudo nvidia-smi -pm 1 (or enable the nvidia-persistenced service) on dedicated training servers'],
      // Costs start-up time only, not training throughput: nothing measured to remove.
      impact_pct: 0,
      source: src,
    });
  }
  const ecc = Math.max(0, ...all.map((s) => s.ecc_uncorrected_volatile ?? 0));
  const retired = Math.max(0, ...all.map((s) => s.retired_pages ?? 0));
  if (ecc > 0 || retired > 0) {
    out.push({
      id: 'smi.memory-errors',
      severity: 'critical',
      bottleneck: 'system',
      title: `${name}: ${ecc} uncorrectable ECC errors, ${retired} retired pages`,
      evidence: [`volatile uncorrectable ECC errors ${ecc}; retired pages ${retired}`],
      fix: [
        'Drain the node and reset the GPU (nvidia-smi -r) after jobs stop; replace the board if errors recur',
        'Check nvidia-smi -q -d PAGE_RETIREMENT,ROW_REMAPPER',
      ],
      // A risk of crashes and silent corruption, not a measured slowdown: ranked by severity instead.
      impact_pct: 0,
      source: src,
    });
  }
  const slowLink = all.find(
    (s) =>
      (s.state === 'load' || (s.utilization_gpu_pct ?? 0) >= 50) &&
      ((s.pcie_gen_current !== undefined && s.pcie_gen_max !== undefined && s.pcie_gen_current < s.pcie_gen_max) ||
        (s.pcie_width_current !== undefined &&
          s.pcie_width_max !== undefined &&
          s.pcie_width_current < s.pcie_width_max)),
  );
  if (slowLink) {
    out.push({
      id: 'smi.pcie-link-degraded',
      severity: 'warning',
      bottleneck: 'host-device-copy',
      title:
        `${name}: PCIe link below its maximum while busy (gen ${slowLink.pcie_gen_current}/` +
        `${slowLink.pcie_gen_max}, x${slowLink.pcie_width_current}/x${slowLink.pcie_width_max})`,
      evidence: [
        `${slowLink.source}${slowLink.state ? ` (${slowLink.state})` : ''}: utilization ${slowLink.utilization_gpu_pct ?? '?'}%`,
      ],
      fix: [
        'Reseat the card or check the slot/riser; verify BIOS PCIe settings',
        'Host-device copies and GPUDirect traffic run at the degraded link speed',
      ],
      // Only copies slow down; nvidia-smi does not say how much of the run they take (a trace does).
      impact_pct: 0,
      source: src,
    });
  }
  if (all.some((s) => s.mig_enabled)) {
    const n = Math.max(0, ...all.map((s) => s.mig_devices ?? 0));
    out.push({
      id: 'smi.mig-enabled',
      severity: 'info',
      bottleneck: 'system',
      title: `${name}: MIG enabled with ${n} instance(s)`,
      evidence: [
        'Each MIG instance has a fraction of the SMs and memory; per-GPU utilization is not reported in MIG mode',
      ],
      fix: ['For large training jobs disable MIG (sudo nvidia-smi -i <id> -mig 0) or request whole GPUs'],
      impact_pct: 0,
      source: src,
    });
  }
}

function processFindings(processes: readonly ProcessSample[], src: string, out: Finding[]): void {
  const byGpu = new Map<number, Set<string>>();
  const smByProc = new Map<string, number[]>();
  for (const p of processes) {
    if (p.type !== 'C') continue; // C+G are desktop compositors, not training jobs
    const set = byGpu.get(p.gpu) ?? new Set<string>();
    const key = `${p.pid} ${p.command}`;
    set.add(key);
    byGpu.set(p.gpu, set);
    if (p.sm_pct !== undefined) smByProc.set(`${p.gpu}/${key}`, [...(smByProc.get(`${p.gpu}/${key}`) ?? []), p.sm_pct]);
  }
  for (const [gpu, procs] of byGpu) {
    if (procs.size < 2) continue;
    // The SM share the other processes take from the busiest one is the time it loses.
    const meanSm = [...procs]
      .map((k) => ({ k, sm: mean(smByProc.get(`${gpu}/${k}`) ?? [0]) }))
      .sort((a, b) => b.sm - a.sm);
    const others = meanSm.slice(1).reduce((acc, x) => acc + x.sm, 0);
    out.push({
      id: 'smi.shared-gpu',
      severity: 'warning',
      bottleneck: 'gpu-compute',
      title: `GPU ${gpu}: ${procs.size} compute processes share the GPU`,
      evidence: [`pmon: ${[...procs].join('; ')}`],
      fix: [
        'Run one training process per GPU (torchrun --nproc_per_node=<GPUs>); processes on one GPU time-slice its SMs',
        'Pin jobs to GPUs with CUDA_VISIBLE_DEVICES or the Kubernetes device plugin',
      ],
      impact_pct: Math.min(100, others),
      source: src,
    });
  }
}

/** Topology advice: NVLink islands, cross-socket pairs and CPU/NUMA binding. Pure. */
export function topologyFindings(t: Topology, src: string): Finding[] {
  const out: Finding[] = [];
  const gpuPairs = t.links.filter((l) => /^GPU\d+$/.test(l.a) && /^GPU\d+$/.test(l.b));
  const slow = gpuPairs.filter((l) => l.kind === 'SYS' || l.kind === 'NODE' || l.kind === 'PHB');
  const nv = gpuPairs.filter((l) => l.kind === 'NVLINK');
  const affinity = t.gpus.filter((g) => g.cpu_affinity);
  if (gpuPairs.length > 0) {
    out.push({
      id: slow.length > 0 ? 'topo.gpu-pairs-cross-host-bridge' : 'topo.gpu-interconnect',
      severity: slow.length > 0 ? 'warning' : 'info',
      bottleneck: 'communication',
      title:
        slow.length > 0
          ? `${slow.length} of ${gpuPairs.length} GPU pairs talk through the CPU, not NVLink or a PCIe switch`
          : `All ${gpuPairs.length} GPU pairs are connected by NVLink or a PCIe switch`,
      evidence: [
        `NVLink pairs: ${nv.map((l) => `${l.a}-${l.b} (NV${l.nvlinks})`).join(', ') || 'none'}`,
        ...(['SYS', 'NODE', 'PHB'] as const)
          .map((k) => {
            const ls = slow.filter((l) => l.kind === k);
            return ls.length ? `${k} (${LINK_MEANING[k]}): ${ls.map((l) => `${l.a}-${l.b}`).join(', ')}` : '';
          })
          .filter((x) => x),
      ],
      fix: [
        'Give a job GPUs from one NVLink island / one NUMA node, e.g. CUDA_VISIBLE_DEVICES=0,1,2,3 when 0-3 are fully NVLink-connected',
        'Let NCCL route rings over NVLink (default); do not set NCCL_P2P_DISABLE=1; NCCL_P2P_LEVEL=NVL keeps P2P to NVLink pairs',
      ],
      impact_pct: 0,
      source: src,
    });
  }
  if (affinity.length > 0) {
    const numa = new Map<string, string[]>();
    for (const g of affinity) {
      const k = g.numa_affinity ?? g.cpu_affinity!;
      numa.set(k, [...(numa.get(k) ?? []), g.name]);
    }
    out.push({
      id: 'topo.cpu-affinity',
      severity: 'info',
      bottleneck: 'input-pipeline',
      title: `CPU/NUMA affinity per GPU: bind each training process to the cores of its GPU's socket`,
      evidence: affinity.map(
        (g) => `${g.name}: CPUs ${g.cpu_affinity}${g.numa_affinity ? `, NUMA node ${g.numa_affinity}` : ''}`,
      ),
      fix: [
        ...affinity
          .slice(0, 2)
          .map(
            (g) =>
              `numactl --physcpubind=${g.cpu_affinity}` +
              `${g.numa_affinity && /^\d+$/.test(g.numa_affinity) ? ` --membind=${g.numa_affinity}` : ''} ` +
              `python train.py  # process using ${g.name}`,
          ),
        'mpirun --map-by socket --bind-to socket -np <GPUs> ... ; with torchrun, wrap the script in numactl per local rank',
      ],
      impact_pct: 0,
      source: src,
    });
  }
  const nicLinks = t.links.filter((l) => t.nics.includes(l.a) || t.nics.includes(l.b));
  if (t.nics.length > 0 && nicLinks.length > 0) {
    const best = t.gpus.map((g) => {
      const near = nicLinks.filter((l) => (l.a === g.name || l.b === g.name) && (l.kind === 'PIX' || l.kind === 'PXB'));
      return `${g.name}: ${near.map((l) => (l.a === g.name ? l.b : l.a)).join(', ') || 'no NIC behind the same PCIe switch'}`;
    });
    out.push({
      id: 'topo.gpu-nic-affinity',
      severity: 'info',
      bottleneck: 'communication',
      title: `NICs nearest each GPU (same PCIe switch: GPUDirect RDMA capable)`,
      evidence: best,
      fix: [
        `Expose all NICs to NCCL: NCCL_IB_HCA=${t.nics.join(',')}; keep NCCL_NET_GDR_LEVEL at its ` +
          `default (or PIX) so each GPU uses the NIC on its switch`,
      ],
      impact_pct: 0,
      source: src,
    });
  }
  return out;
}

/** Findings from all nvidia-smi data of one input. Pure. */
export function nvidiaSmiFindings(data: NvidiaSmiData, src: string): Finding[] {
  const out: Finding[] = [];
  for (const samples of groupByGpu(data.samples).values()) {
    utilizationFindings(samples, src, out);
    healthFindings(samples, src, out);
  }
  processFindings(data.processes, src, out);
  if (data.topology) out.push(...topologyFindings(data.topology, src));
  return out;
}
