/**
 * A job's detail view as `GET /v1/jobs/:id` answers it, for the tests of what the CLI renders
 * from it (cli/job-render.test.ts, cli/terminal-escapes.test.ts). Test-only (not shipped: testing/).
 */
import type { JobRecord, Measurement } from '../../store/types.js';
import { jobView, type JobDetail } from '../views.js';

/** The detail of `record` (its newest measurement `latest`) on CPU slots, holding no replica now; `extra` overrides. */
export function jobDetailFixture(record: JobRecord, extra: Partial<JobDetail> = {}, latest?: Measurement): JobDetail {
  return {
    ...jobView(record, latest),
    device_kind: 'cpu',
    current_replicas: [],
    rejection: null,
    launch_wait: null,
    kept: null,
    checkpoint_at: null,
    perf: record.perf,
    grad: record.grad,
    limits: record.limits,
    remaining_samples: null,
    ...extra,
  };
}
