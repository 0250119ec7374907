/**
 * What bench:scale's server fixture (server-fixture.ts) and its server process (server-child.ts)
 * agree on: the cluster's node names and the replicas running on it. Apart from the fixture so
 * that the server process imports nothing of the bench's writers (the fixture's history writer
 * reaches the dashboard's browser driver, and loading playwright-core took the server process
 * about half a second of CPU at its start).
 */

/** A replica the backend runs, as bench/scale/server-child.ts seeds it. */
export interface SeededReplica {
  job_id: string;
  attempt: number;
  rank: number;
  node: string;
}

/** The name of node `n` of the fixture's cluster. */
export function nodeName(n: number): string {
  return `node-${String(n).padStart(5, '0')}`;
}
