/**
 * The live cases of issue 48 on a real `goodput up --cpu-slots 4`, shared by the e2e test
 * (src/control/e2e-shares.test.ts, short) and `npm run bench:shares-live` (the 150 s measurement):
 * users with tokens of their own, plain preemptible jobs, the slots each user holds sampled
 * through the API.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GoodputClient } from '../../src/client/client.js';
import { cleanup, PLAIN_20S, runCli, sleep, startServerProcess, tempDataDir, type ServerProcess } from './harness.js';

/** A plain job that runs about 10 minutes and never reports (preemptible: a stop loses only time). */
export const PLAIN_LONG: readonly string[] = [
  PLAIN_20S[0]!,
  PLAIN_20S[1]!,
  'i=0; while [ $i -lt 600 ]; do i=$((i+1)); sleep 1; done',
];

/** A running server with a client per user. */
export interface LiveCluster {
  server: ServerProcess;
  data_dir: string;
  as(user: string): Promise<GoodputClient>;
  /** Slots held by running jobs of `ids`. */
  holding(client: GoodputClient, ids: readonly string[]): Promise<number>;
  close(): void;
}

/** Starts `goodput up --cpu-slots 4 --interval-s INTERVAL` (with `shares`, a shares file's text). */
export async function liveCluster(interval_s: number, shares?: string): Promise<LiveCluster> {
  const data_dir = tempDataDir('goodput-shares-');
  const args = ['--cpu-slots', '4', '--interval-s', String(interval_s), '--grace-s', '2'];
  if (shares !== undefined) {
    writeFileSync(join(data_dir, 'shares.yaml'), shares);
    args.push('--shares', join(data_dir, 'shares.yaml'));
  }
  const server = await startServerProcess(data_dir, args);
  const clients = new Map<string, GoodputClient>();
  return {
    server,
    data_dir,
    async as(user) {
      const known = clients.get(user);
      if (known) return known;
      const made = await runCli(['token', 'create', '--user', user, '--json', '--data-dir', data_dir]);
      if (made.status !== 0) throw new Error(`token create --user ${user}: ${made.stderr}`);
      const client = new GoodputClient(server.url, (JSON.parse(made.stdout) as { token: string }).token);
      clients.set(user, client);
      return client;
    },
    async holding(client, ids) {
      let n = 0;
      for (const id of ids) {
        const j = await client.getJob(id);
        if (j.state === 'running') n += j.replicas;
      }
      return n;
    },
    close: () => cleanup(data_dir, [server]),
  };
}

/** Submits `count` plain preemptible jobs as `client`; their ids. */
export async function submitPlain(
  client: GoodputClient,
  prefix: string,
  count: number,
  workdir: string,
  extra: { min_replicas?: number; max_replicas?: number } = {},
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++)
    ids.push(
      (await client.submit({ name: `${prefix}-${i}`, command: [...PLAIN_LONG], workdir, preemptible: true, ...extra }))
        .id,
    );
  return ids;
}

/** Samples `f` every `every_ms` for `duration_ms`; the samples' average. */
export async function averageOver(duration_ms: number, every_ms: number, f: () => Promise<number>): Promise<number> {
  const samples: number[] = [];
  const end = Date.now() + duration_ms;
  while (Date.now() < end) {
    samples.push(await f());
    await sleep(every_ms);
  }
  return samples.reduce((s, x) => s + x, 0) / Math.max(1, samples.length);
}
