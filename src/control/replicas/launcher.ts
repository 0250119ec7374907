/**
 * The launcher part of the controller: every tick, launches the jobs that may start (devices
 * free, restart backoff over) and enforces SIGKILL deadlines; says why a `starting` job waits.
 * An attempt the cluster's scheduler holds after its submission (a PENDING Slurm job) is
 * recorded as launched only once its processes run: until then the job stays `starting` with
 * the scheduler's reason, its devices are not counted as in use and hung detection has not begun.
 */
import type { LaunchedReplica, ReplicaExit } from '../../backends/backend.js';
import { GoodputError } from '../../core/errors.js';
import type { JobRecord } from '../../store/types.js';
import { replicasByJob } from './kill-deadlines.js';
import type { ControllerContext } from '../controller-context.js';
import { gpuTypeOf } from '../reports/profile-book.js';
import type { Supervisor } from './supervisor.js';
import { jobToken } from '../tokens.js';
import { launchWait } from './launch-wait.js';
import { liveReplicasInTurns } from '../paged-reads.js';

/** An attempt the backend launched whose processes do not run yet: recorded once they do. */
interface Submitted {
  attempt: number;
  /** The placement it was launched on (a retarget makes it stale). */
  placement: string;
  replicas: LaunchedReplica[];
  gpu_type: string | undefined;
  submitted_ms: number;
  /** Exits the backend reported before the attempt was recorded (it ended while held). */
  exits: ReplicaExit[];
  /** noteOnce keys of its hold events, forgotten once it is recorded or dropped. */
  noted: Set<string>;
}

/** A hold lasting this long gets an event even when its reason is an ordinary one (GPUs being released). */
const HOLD_EVENT_MS = 5000;
/** Reasons every launch may show for a moment: an event only once they last HOLD_EVENT_MS. */
const ORDINARY_HOLD = /^submitted|PENDING \((?:Resources|Priority|None)\b|PENDING \(submitted/;

const placementOf = (job: JobRecord) => `${job.allocation.join(',')}/${job.devices.join(',')}`;

export class Launcher {
  private readonly waits = new Map<string, string>();
  /** Jobs whose launch the backend holds (PENDING, or refused for the cluster's state), with its reason. */
  private readonly holds = new Map<string, string>();
  private readonly submitted = new Map<string, Submitted>();
  /** Not before (ms) another launch of a job the backend refused for the cluster's state: once a round. */
  private readonly retryAt = new Map<string, number>();
  /** Jobs whose shown wait is the backend's refusal of their last launch (kept while it is retried). */
  private readonly refused = new Set<string>();
  /**
   * Held attempts of jobs that no longer start on their placement, until the backend has ended
   * them (retried while it cannot be reached): the job is not launched again meanwhile, so an
   * abandon never meets the next submission of the same attempt.
   */
  private readonly ending = new Map<string, { attempt: number; busy: boolean; logged: boolean }>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly supervisor: Supervisor,
  ) {}

  /** Why a `starting` job is not running yet (restart backoff, devices held, the cluster holding it), by job id. */
  get launchWaits(): ReadonlyMap<string, string> {
    return this.waits;
  }

  /** Jobs whose launch the backend holds (a PENDING Slurm job, a drained partition), with the reason. */
  get backendHolds(): ReadonlyMap<string, string> {
    return this.holds;
  }

  /**
   * Keeps the exit of an attempt launched but not yet recorded (it ended while the cluster held
   * it) until the attempt is recorded; false for any other exit.
   */
  keepExit(exit: ReplicaExit): boolean {
    const s = this.submitted.get(exit.job_id);
    if (!s || s.attempt !== exit.attempt) return false;
    s.exits.push(exit);
    return true;
  }

  /** Launches startable jobs and enforces SIGKILL deadlines. Cheap; runs every tick. */
  async pump(): Promise<void> {
    const { store, backend, grace_s } = this.ctx.config;
    const now = this.ctx.now();
    if (this.supervisor.watchDue(now))
      await this.supervisor.watch(await liveReplicasInTurns(store, this.ctx.turns()), now);
    const jobs = await store.listJobs({ states: ['starting', 'rescaling'] });
    const names = backend.nodes().map((n) => n.name);
    // Only the live replicas this tick needs: those of the jobs starting or stopping and of the
    // jobs past their kill deadline, and every one on the nodes a starting job is placed on (they
    // may still hold its devices). Reading every live replica on every tick while any job started
    // was a third of a 16,384-GPU server's time (bench:scale, issue #49).
    const ids = [...jobs.map((j) => j.id), ...this.ctx.killAt.dueJobs(now)];
    const nodes = new Set<string>();
    for (const j of jobs)
      if (j.state === 'starting') for (const n of j.allocation) if (names[n] !== undefined) nodes.add(names[n]);
    const live = ids.length > 0 ? await store.listLiveReplicasFor(ids, [...nodes]) : [];
    const liveOf = replicasByJob(live);
    const busy = new Map<string, string>();
    for (const r of live) if (r.device !== null) busy.set(`${r.node}/${r.device}`, r.job_id);
    for (const job of jobs) {
      if (
        job.state === 'rescaling' &&
        job.stop_requested_at_ms !== null &&
        now >= job.stop_requested_at_ms + grace_s * 1000
      ) {
        for (const r of liveOf.get(job.id) ?? []) backend.signal(this.ctx.ref(r), 'SIGKILL');
      }
    }
    for (const r of this.ctx.killAt.due(now, live)) backend.signal(this.ctx.ref(r), 'SIGKILL');
    const starting = new Set(jobs.filter((j) => j.state === 'starting').map((j) => j.id));
    for (const map of [this.waits, this.holds, this.retryAt, this.refused])
      for (const id of map.keys()) if (!starting.has(id)) map.delete(id);
    this.dropStale(jobs);
    this.endDropped();
    const turns = this.ctx.turns();
    for (const job of jobs) {
      if (job.state !== 'starting') continue;
      await turns.pause();
      if (this.ending.has(job.id)) {
        this.wait(
          job.id,
          `ending attempt ${this.ending.get(job.id)!.attempt}, held by the cluster on its previous placement, before it launches again`,
        );
        continue;
      }
      const submitted = this.submitted.get(job.id);
      if (submitted) {
        await this.follow(job, submitted, now);
        continue;
      }
      if (now < (this.retryAt.get(job.id) ?? 0)) continue;
      const keys = job.devices.map((d, i) => `${names[job.allocation[i]!]}/${d}`);
      const held = [...new Set(keys.filter((k) => busy.has(k) && busy.get(k) !== job.id))];
      if (now < job.not_before_ms)
        this.wait(job.id, `restart backoff until ${new Date(job.not_before_ms).toISOString()}`);
      else if (held.length > 0)
        this.wait(
          job.id,
          `device(s) ${held.join(',')} still held by the exiting replicas of job ${busy.get(held[0]!)}`,
        );
      else if (!liveOf.has(job.id)) {
        // A refusal's reason stays shown while its retry runs (an sbatch can take seconds): the
        // job is still waiting on the cluster until the retry says otherwise.
        if (!this.refused.has(job.id)) this.waits.delete(job.id);
        await this.launch(job);
      }
    }
  }

  /** Shows why `job_id` is not running yet; `refusal`: the backend refused its last launch. */
  private wait(job_id: string, reason: string, refusal = false): void {
    this.waits.set(job_id, reason);
    if (refusal) this.refused.add(job_id);
    else this.refused.delete(job_id);
  }

  private async launch(job: JobRecord): Promise<void> {
    const { store, backend, secret, api_url, port_range } = this.ctx.config;
    const attempt = job.launches;
    const job_dir = this.ctx.jobDir(job.id);
    let launched;
    // Recorded with each replica: its reports are stored as measurements of this type.
    const gpu_type = gpuTypeOf(job, backend.nodes());
    try {
      const run_as = await this.ctx.config.run_as?.(job.user);
      await backend.abandon(job.id, job_dir, attempt);
      launched = await backend.launch({
        job_id: job.id,
        attempt,
        command: job.spec.command,
        workdir: job.spec.workdir,
        env: job.spec.env,
        environment: job.spec,
        devices: job.devices,
        nodes: job.allocation,
        num_nodes: new Set(job.allocation).size,
        gpu_type,
        api_url,
        token: jobToken(secret, job.id),
        job_dir,
        restarts: job.failures,
        max_restarts: job.spec.max_restarts,
        ...(port_range ? { port_range } : {}),
        ...(run_as ? { run_as } : {}),
      });
    } catch (error) {
      const message = error instanceof GoodputError ? error.message : String(error);
      const wait = launchWait(error, message);
      if (wait) {
        // Not the job's fault: it stays `starting` and the pump retries (a refusal for the
        // cluster's state once a round: each try is an sbatch).
        this.wait(job.id, wait.reason, true);
        if (wait.key === 'held') {
          this.holds.set(job.id, wait.reason);
          this.retryAt.set(job.id, this.ctx.now() + this.ctx.config.interval_s * 1000);
        }
        const kind = wait.key === 'held' ? 'waiting' : 'backend-unavailable';
        return void (await this.ctx
          .noteOnce(job.id, wait.key, kind, `cannot launch now: ${wait.reason}`)
          .catch(() => undefined));
      }
      await store.finishJob(job.id, 'failed', 'backend', `launch failed: ${message}`);
      this.ctx.requestRound();
      return;
    }
    for (const key of ['unavailable', 'disk-full', 'held']) this.ctx.forget(job.id, key);
    this.holds.delete(job.id);
    this.waits.delete(job.id);
    this.refused.delete(job.id);
    const held = launched[0] ? backend.held?.(launched[0].launch_id) : undefined;
    if (held !== undefined) {
      const submitted_ms = this.ctx.now();
      this.submitted.set(job.id, {
        attempt,
        placement: placementOf(job),
        replicas: launched,
        gpu_type,
        submitted_ms,
        exits: [],
        noted: new Set(),
      });
      return this.follow(job, this.submitted.get(job.id)!, submitted_ms);
    }
    await this.record(job, launched, gpu_type);
  }

  /** Records a launched attempt: the job is `running` from now. */
  private async record(
    job: JobRecord,
    launched: readonly LaunchedReplica[],
    gpu_type: string | undefined,
  ): Promise<void> {
    const { store, backend } = this.ctx.config;
    const where = [...new Set(launched.map((r) => r.node))].join(',');
    const id = launched[0]?.launch_id ? ` (${backend.name} job ${launched[0].launch_id})` : '';
    await store.launchJob(
      job.id,
      launched.map((r) => ({ ...r, gpu_type })),
      'backend',
      `attempt ${job.launches} on node(s) ${where}, device(s) ${job.devices.join(',')}${id}`,
    );
  }

  /**
   * A submitted attempt the backend held: still held, the job waits with the backend's reason
   * (an event once the reason is not an ordinary moment's, or has lasted HOLD_EVENT_MS); else it
   * is recorded as launched now, with the exits that came meanwhile.
   */
  private async follow(job: JobRecord, s: Submitted, now: number): Promise<void> {
    const { store, backend } = this.ctx.config;
    const reason = backend.held?.(s.replicas[0]!.launch_id);
    if (reason !== undefined) {
      this.wait(job.id, reason);
      this.holds.set(job.id, reason);
      if (!ORDINARY_HOLD.test(reason) || now - s.submitted_ms >= HOLD_EVENT_MS) {
        const key = `held:${reason}`;
        s.noted.add(key);
        await this.ctx.noteOnce(job.id, key, 'waiting', `launched, not running yet: ${reason}`).catch(() => undefined);
      }
      return;
    }
    this.forgetSubmitted(job.id, s);
    // It runs from now: hung detection and the job's service count from here, not from the submission.
    const started_at_ms = this.ctx.now();
    await this.record(
      job,
      s.replicas.map((r) => ({ ...r, started_at_ms })),
      s.gpu_type,
    );
    for (const e of s.exits) {
      if (await store.recordReplicaExit(e, 'backend')) await this.supervisor.settle(e.job_id);
    }
  }

  /**
   * Drops submitted attempts whose job no longer starts on that placement (cancelled, requeued,
   * retargeted by a round): the backend ends what was submitted (a pending Slurm job is cancelled).
   */
  private dropStale(jobs: readonly JobRecord[]): void {
    for (const [id, s] of this.submitted) {
      const job = jobs.find((j) => j.id === id);
      if (job && job.state === 'starting' && job.launches === s.attempt && placementOf(job) === s.placement) continue;
      this.forgetSubmitted(id, s);
      this.holds.delete(id);
      this.waits.delete(id);
      this.ending.set(id, { attempt: s.attempt, busy: false, logged: false });
    }
  }

  /** Asks the backend to end the dropped held attempts (a pending Slurm job is cancelled), again until it could. */
  private endDropped(): void {
    for (const [id, e] of this.ending) {
      if (e.busy) continue;
      e.busy = true;
      this.ctx.config.backend.abandon(id, this.ctx.jobDir(id), e.attempt).then(
        () => void this.ending.delete(id),
        (error: unknown) => {
          e.busy = false;
          if (!e.logged)
            this.ctx.log(
              `job ${id}: cannot end its held attempt ${e.attempt} now (${(error as Error).message}); trying again`,
            );
          e.logged = true;
        },
      );
    }
  }

  private forgetSubmitted(job_id: string, s: Submitted): void {
    this.submitted.delete(job_id);
    this.holds.delete(job_id);
    for (const key of s.noted) this.ctx.forget(job_id, key);
  }
}
