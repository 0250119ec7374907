/**
 * `npm run bench:soak -- --big-store --flood`: the faults of a store that grows and of one
 * user's flood (big-store.ts, flood.ts), each on its own real server, printed per fault as what
 * was lost, stuck or slow, and whether the targets were met.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bigStoreFault } from './big-store.js';
import { floodFault } from './flood.js';
import { agent, type SoakFault } from './serve.js';

/** Which faults to run and their sizes. */
export interface StoreDayOptions {
  big_store: boolean;
  flood: boolean;
  store_jobs: number;
  flood_submits: number;
}

/** Prints one fault's result. */
export function printFault(r: SoakFault): void {
  console.log(`  fault: ${r.fault}   ${r.met ? 'MET' : 'NOT MET'}`);
  console.log(`    lost:  ${r.lost}`);
  console.log(`    stuck: ${r.stuck}`);
  console.log(`    slow:  ${r.slow}`);
  for (const line of r.details) console.log(`    ${line}`);
}

/** Runs the chosen faults; returns the exit status (0 when every target was met). */
export async function runStoreDay(o: StoreDayOptions): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'goodput-soak-store-'));
  const results: SoakFault[] = [];
  try {
    console.log(`bench:soak  store and flood faults on real 'goodput up' servers (2 CPU slots, loopback)`);
    if (o.big_store) {
      results.push(await bigStoreFault(dir, o.store_jobs));
      printFault(results.at(-1)!);
    }
    if (o.flood) {
      results.push(await floodFault(dir, o.flood_submits));
      printFault(results.at(-1)!);
    }
  } finally {
    agent.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
  return results.every((r) => r.met) ? 0 : 1;
}
