/**
 * The launcher part of the controller: every tick, launches the jobs that may start (devices
 * free, restart backoff over) and enforces SIGKILL deadlines; says why a `starting` job waits.
 */
import { GoodputError } from '../core/errors.js';
import type { JobRecord } from '../store/types.js';
import type { ControllerContext } from './controller-context.js';
import { gpuTypeOf } from './profile-book.js';
import type { Supervisor } from './supervisor.js';
import { jobToken } from './tokens.js';
import { launchWait } from './launch-wait.js';

export class Launcher {
  private readonly waits = new Map<string, string>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly supervisor: Supervisor,
  ) {}

  /** Why a `starting` job is not launched yet (restart backoff, devices still held), by job id. */
  get launchWaits(): ReadonlyMap<string, string> {
    return this.waits;
  }

  /** Launches startable jobs and enforces SIGKILL deadlines. Cheap; runs every tick. */
  async pump(): Promise<void> {
    const { store, backend, grace_s } = this.ctx.config;
    const now = this.ctx.now();
    if (this.supervisor.watchDue(now)) await this.supervisor.watch(await store.listLiveReplicas(), now);
    const live = await store.listLiveReplicas();
    const busy = new Map<string, string>();
    for (const r of live) if (r.device !== null) busy.set(`${r.node}/${r.device}`, r.job_id);
    const names = backend.nodes().map((n) => n.name);
    const jobs = await store.listJobs({ states: ['starting', 'rescaling'] });
    for (const job of jobs) {
      if (job.state === 'rescaling' && job.stop_requested_at_ms !== null && now >= job.stop_requested_at_ms + grace_s * 1000) {
        for (const r of live) if (r.job_id === job.id) backend.signal(this.ctx.ref(r), 'SIGKILL');
      }
    }
    for (const r of this.ctx.killAt.due(now, live)) backend.signal(this.ctx.ref(r), 'SIGKILL');
    for (const id of this.waits.keys()) if (!jobs.some((j) => j.id === id && j.state === 'starting')) this.waits.delete(id);
    for (const job of jobs) {
      if (job.state !== 'starting') continue;
      const keys = job.devices.map((d, i) => `${names[job.allocation[i]!]}/${d}`);
      const held = [...new Set(keys.filter((k) => busy.has(k) && busy.get(k) !== job.id))];
      if (now < job.not_before_ms) this.waits.set(job.id, `restart backoff until ${new Date(job.not_before_ms).toISOString()}`);
      else if (held.length > 0) this.waits.set(job.id, `device(s) ${held.join(',')} still held by the exiting replicas of job ${busy.get(held[0]!)}`);
      else if (!live.some((r) => r.job_id === job.id)) {
        this.waits.delete(job.id);
        await this.launch(job);
      }
    }
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
        // Not the job's fault: it stays `starting` and the pump retries.
        this.waits.set(job.id, wait.reason);
        return void (await this.ctx.noteOnce(job.id, wait.key, 'backend-unavailable', `cannot launch now: ${wait.reason}`).catch(() => undefined));
      }
      await store.finishJob(job.id, 'failed', 'backend', `launch failed: ${message}`);
      this.ctx.requestRound();
      return;
    }
    for (const key of ['unavailable', 'disk-full']) this.ctx.forget(job.id, key);
    const where = [...new Set(launched.map((r) => r.node))].join(',');
    const id = launched[0]?.launch_id ? ` (${backend.name} job ${launched[0].launch_id})` : '';
    await store.launchJob(job.id, launched.map((r) => ({ ...r, gpu_type })), 'backend', `attempt ${attempt} on node(s) ${where}, device(s) ${job.devices.join(',')}${id}`);
  }
}
