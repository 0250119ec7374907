import { after } from 'node:test';
import { runBackendConformance } from '../conformance.js';
import { SlurmBackend } from './slurm-backend.js';
import { slurmMissing, startSlurmCluster, type SlurmCluster } from './testing/slurm-cluster.js';

let cluster: SlurmCluster | undefined;
after(async () => cluster?.stop());

runBackendConformance(
  'slurm',
  async () => {
    cluster = await startSlurmCluster();
    const c = cluster;
    return {
      make: () => new SlurmBackend({ name_prefix: 'goodput-conformance', env: c.env, poll_ms: 250 }),
      two_nodes: [0, 1],
      two_devices: [0, 0],
      timeout_ms: 60_000,
      close: () => c.stop(),
    };
  },
  slurmMissing(),
);
