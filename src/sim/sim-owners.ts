/**
 * Owners and teams of a workload's jobs in the simulators (issue 48), one-type and mixed-type
 * alike: the optional `user` and `team` columns of a workload CSV, each job's team (the column,
 * else the shares file's team of its user, else the user alone), and the decayed usage charged
 * on simulated time that the shares layer reads from the snapshot.
 */
import type { ClusterSnapshot, PolicyJob, ShareUsage } from '../core/cluster.js';
import { inputError } from '../core/errors.js';
import { advanceUsage, DEFAULT_HALF_LIFE_S, teamOf, type SharesConfig } from '../policy/shares/index.js';
import type { CsvRow, CsvTable } from './csv.js';

/** Who submitted a job and the team it is charged to; both absent for a workload without users. */
export interface JobOwner {
  user?: string;
  team?: string;
}

/**
 * The `user` and `team` cells of `row` (absent when the column is missing or the cell empty).
 * Throws E_INPUT naming the file and line for a team without a user: a team charges a user's jobs.
 */
export function ownerCells(file: string, table: CsvTable, row: CsvRow): JobOwner {
  const cell = (name: string): string | undefined => {
    const at = table.header.indexOf(name);
    const text = at === -1 ? '' : (row.cells[at] ?? '').trim();
    return text === '' ? undefined : text;
  };
  const user = cell('user');
  const team = cell('team');
  if (team !== undefined && user === undefined)
    throw inputError(file, row.line, `column 'team' is set but 'user' is empty: a team charges a user's jobs`);
  return { ...(user !== undefined ? { user } : {}), ...(team !== undefined ? { team } : {}) };
}

/** Whether any of `jobs` names a user: only then do the simulators run the shares layer. */
export function namesUsers(jobs: readonly JobOwner[]): boolean {
  return jobs.some((w) => w.user !== undefined);
}

/**
 * The owners of a workload's jobs (in workload order) and their decayed usage. A workload where no
 * job names a user is not `owned`: its snapshots carry no owners and no shares, so the shares
 * layer passes the policy's decision through unchanged (single-user results stay as they were).
 */
export class SimOwners {
  /** Whether any job names a user. */
  readonly owned: boolean;
  private readonly teams: readonly (string | undefined)[];
  private readonly half_life_s: number;
  private usage: ShareUsage | undefined;

  constructor(
    private readonly jobs: readonly JobOwner[],
    private readonly shares: SharesConfig | undefined,
  ) {
    this.owned = namesUsers(jobs);
    this.teams = jobs.map((w) => w.team ?? (w.user !== undefined ? teamOf(shares, w.user) : undefined));
    this.half_life_s = shares?.half_life_s ?? DEFAULT_HALF_LIFE_S;
  }

  /**
   * Charges the devices each job of `active` (workload indices) held since the last call, up to
   * `now_s`; `held(i)` is how many job i held. Call once per round, before `snapshotShares`.
   */
  charge(now_s: number, active: readonly number[], held: (i: number) => number): void {
    if (!this.owned) return;
    const holdings = active.flatMap((i) => {
      const devices = held(i);
      return devices > 0 ? [{ user: this.jobs[i]!.user ?? '', team: this.teams[i] ?? '', devices }] : [];
    });
    this.usage = advanceUsage(this.usage, holdings, now_s, this.half_life_s);
  }

  /** `job` (workload index i) with its owner and team (unchanged without a user). */
  decorate(i: number, job: PolicyJob): PolicyJob {
    const user = this.jobs[i]!.user;
    return user !== undefined ? { ...job, owner: user, team: this.teams[i]! } : job;
  }

  /** The outcome fields of job i: its user and team ({} without a user). */
  outcome(i: number): JobOwner {
    const user = this.jobs[i]!.user;
    return user !== undefined ? { user, team: this.teams[i]! } : {};
  }

  /** The snapshot's `shares` (teams, half-life, usage so far); {} when no job names a user. */
  snapshotShares(): Pick<ClusterSnapshot, 'shares'> {
    if (!this.owned) return {};
    const usage = this.usage !== undefined ? { usage: this.usage } : {};
    return { shares: { teams: this.shares?.teams ?? [], half_life_s: this.half_life_s, ...usage } };
  }
}
