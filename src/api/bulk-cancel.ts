/**
 * `POST /v1/jobs/cancel`: cancels every job matching a filter (user, states, name) in one store
 * transaction (Store.cancelJobs), for clearing a flood of submits in one call instead of one
 * request per job. A user cancels their own jobs; another user's (or everyone's) need an admin.
 */
import type { Hono } from 'hono';
import type { Controller } from '../control/controller.js';
import type { CancelQuery } from '../store/store.js';
import { requireUser, type ApiEnv } from './auth.js';
import { badRequest, forbidden } from './http-error.js';
import { parseStates } from './job-list.js';
import { bulkCancelBodySchema, type BulkCancelView } from './bulk-cancel-schema.js';
import { parseBody } from './parse-body.js';

/** Registers the route on `app` (behind authentication). */
export function registerBulkCancel(app: Hono<ApiEnv>, controller: Pick<Controller, 'cancelMatching'>): void {
  app.post('/v1/jobs/cancel', async (c) => {
    const principal = requireUser(c.get('principal'));
    const body = await parseBody(c, bulkCancelBodySchema, 'cancel filter');
    if (body.user === undefined && body.state === undefined && body.name === undefined) {
      throw badRequest(
        'give at least one of user, state or name (to cancel every active job of everyone, an admin passes state=active)',
      );
    }
    if (!principal.admin && body.user !== undefined && body.user !== principal.user)
      throw forbidden("only an admin may cancel other users' jobs");
    const query: CancelQuery = {};
    const user = principal.admin ? body.user : principal.user;
    if (user !== undefined) query.user = user;
    if (body.state !== undefined) query.states = parseStates(body.state);
    if (body.name !== undefined) query.name = body.name;
    const done = await controller.cancelMatching(query, principal.user);
    return c.json<BulkCancelView>({
      cancelled: done.length,
      jobs: done.map((j) => ({ id: j.id, name: j.name, user: j.user, from: j.from })),
    });
  });
}
