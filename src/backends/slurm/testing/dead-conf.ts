/** A Slurm configuration whose slurmctld nobody answers, for the "slurmctld unreachable" tests. Test-only. */
import { writeFileSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * Writes to `path` a slurm.conf naming this host's port 1 as slurmctld (nothing listens there)
 * with a 2 s message timeout: every Slurm command given it as SLURM_CONF fails within seconds.
 */
export function writeDeadSlurmConf(path: string): void {
  writeFileSync(
    path,
    [
      'ClusterName=dead',
      `SlurmctldHost=${hostname().split('.')[0]}(127.0.0.1)`,
      'SlurmctldPort=1',
      'AuthType=auth/none',
      'CredType=cred/none',
      'MessageTimeout=2',
      'NodeName=x CPUs=1',
      'PartitionName=p Nodes=x',
      '',
    ].join('\n'),
  );
}
