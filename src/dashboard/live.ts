/**
 * The dashboard of a running control plane (`goodput up --dashboard-port N`): same process, same
 * store and tokens; the node views are built in-process, other /v1 calls are forwarded to the API
 * server. Its URL is written to DIR/dashboard.json so scripts and tests find it when the port was
 * chosen by the OS.
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { nodeViews, type NodeSource } from '../api/node-views.js';
import type { Controller } from '../control/controller.js';
import type { Store } from '../store/store.js';
import { startDashboard, type RunningDashboard } from './server.js';

/** What the dashboard needs of the running server (a structural subset of it). */
export interface ServedControlPlane {
  url: string;
  store: Store;
  controller: Pick<Controller, 'rejections' | 'profilesFor'> & NodeSource;
}

/** Where a running server's dashboard URL is written, in its data directory. */
export function dashboardFile(data_dir: string): string {
  return join(data_dir, 'dashboard.json');
}

/** Starts the dashboard beside `server`; closing it removes DIR/dashboard.json. */
export async function startLiveDashboard(
  server: ServedControlPlane,
  data_dir: string,
  host: string,
  port: number,
): Promise<RunningDashboard> {
  const secret = readFileSync(join(data_dir, 'secret'), 'utf8').trim();
  const dashboard = await startDashboard({
    host,
    port,
    live: {
      api_url: server.url,
      store: server.store,
      secret,
      nodes: (principal, placed) => nodeViews(server.store, server.controller, principal, placed),
      rejection: (id) => server.controller.rejections.get(id),
      profiles: (jobs) => server.controller.profilesFor(jobs),
      data_dir,
    },
  });
  const file = dashboardFile(data_dir);
  writeFileSync(file + '.tmp', JSON.stringify({ url: dashboard.url, pid: process.pid }) + '\n', { mode: 0o600 });
  renameSync(file + '.tmp', file);
  return {
    url: dashboard.url,
    async close() {
      await dashboard.close();
      rmSync(file, { force: true });
    },
  };
}
