/**
 * `npm run bench:soak -- --input-faults`: the input and store faults of issue 47 (items 5, 6, 10),
 * each on a server of its own: large request bodies, a log written at full speed under its cap,
 * a store that cannot be written. Prints per fault what was lost, stuck or slow, and whether its
 * target was met; returns the exit status (1 when a target was not met).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bodiesFault } from './bodies.js';
import type { FaultResult } from './input-server.js';
import { logCapFault } from './log-cap.js';
import { unwritableStoreFault } from './unwritable-store.js';

export async function runInputFaults(): Promise<number> {
  const base = mkdtempSync(join(tmpdir(), 'goodput-soak-input-'));
  const results: FaultResult[] = [];
  try {
    console.log("bench:soak --input-faults  real 'goodput up' servers on loopback, 2 CPU slots each");
    for (const fault of [bodiesFault, logCapFault, unwritableStoreFault]) {
      const r = await fault(base);
      results.push(r);
      console.log(`  ${r.fault}: ${r.met ? 'MET' : 'NOT MET'}`);
      for (const line of r.lines) console.log(`    ${line}`);
    }
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
  return results.every((r) => r.met) ? 0 : 1;
}
