/**
 * The routes of the verdicts across ranks (docs/doctor.md, "Live verdicts across ranks"):
 * `POST /v1/jobs/{id}/ranks` (every rank's summary, job token; docs/contract.md),
 * `GET /v1/jobs/{id}/ranks` (each rank now, the straggler and hang verdicts, and the replicas'
 * process facts, which a plain job has too) and `POST /v1/nodes/clear` (admin: clear the marks of
 * a node's devices).
 */
import type { Context, Hono } from 'hono';
import type { Controller } from '../control/controller.js';
import type { DeviceMark } from '../control/ranks/device-health.js';
import { rankSummaryBodySchema } from '../core/rank-wire.js';
import { stepTime_s } from '../doctor/ranks/rank-state.js';
import type { JobRecord } from '../store/types.js';
import { requireUser, type ApiEnv } from './auth.js';
import { forbidden } from './http-error.js';
import { jsonBody, parse } from './parse-body.js';
import { nodeClearBodySchema, type RanksView } from './rank-views.js';

export function registerRankRoutes(
  app: Hono<ApiEnv>,
  controller: Controller,
  findJob: (c: Context<ApiEnv>, ref: string) => Promise<JobRecord>,
  now_ms: () => number,
): void {
  app.post('/v1/jobs/:id/ranks', async (c) => {
    const id = c.req.param('id');
    const principal = c.get('principal');
    if (principal.kind === 'job' && principal.job_id !== id)
      throw forbidden(`this token belongs to job ${principal.job_id}, not ${id}`);
    if (principal.kind === 'user' && !principal.admin)
      throw forbidden('rank summaries are posted with the job token (GOODPUT_TOKEN)');
    await controller.rankSummary(id, parse(rankSummaryBodySchema, await jsonBody(c, 'rank summary'), 'rank summary'));
    return c.json({ ok: true });
  });

  app.get('/v1/jobs/:id/ranks', async (c) => {
    requireUser(c.get('principal'));
    const job = await findJob(c, c.req.param('id'));
    const v = controller.rankVerdicts(job.id);
    const now = now_ms();
    const view: RanksView = {
      attempt: v?.attempt ?? null,
      ranks: (v?.ranks ?? []).map((r) => ({
        rank: r.rank,
        node: r.node,
        device: r.device,
        step: r.step,
        phase: r.phase,
        heard_s_ago: (now - r.last_heard_ms) / 1000,
        progress_s_ago: r.progress_ms === null ? null : (now - r.progress_ms) / 1000,
        step_s: stepTime_s(r.windows),
      })),
      straggler: v?.straggler ?? null,
      hang: v?.hang ?? null,
      processes: await controller.processFacts(job.id),
    };
    return c.json(view);
  });

  app.post('/v1/nodes/clear', async (c) => {
    const principal = requireUser(c.get('principal'));
    if (!principal.admin) throw forbidden('only an admin clears the marks of devices');
    const body = parse(nodeClearBodySchema, await jsonBody(c, 'node clear'), 'node clear');
    const cleared: DeviceMark[] = controller.clearDeviceMarks(body.node, body.device);
    return c.json({ cleared });
  });
}
