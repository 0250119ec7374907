import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jobDetailFixture } from '../api/testing/job-detail.js';
import { type EventView, type JobDetail } from '../api/views.js';
import { jobRecordFixture } from '../store/job-fixture.js';
import { renderJob, renderJobList } from './job-render.js';

const record = jobRecordFixture({
  id: 'ab12',
  name: 'digits',
  allocation: [0, 0],
  devices: [0, 1],
  launches: 2,
  attained_service_gpu_s: 12.5,
  max_profiled_replicas: 2,
  spec: {
    name: 'digits',
    command: ['python3', 'train.py'],
    workdir: '/w',
    env: {},
    min_replicas: 0,
    max_replicas: 3,
    max_restarts: 1,
    preemptible: true,
    priority: 0,
    venv: '/w/.venv',
  },
  reason: 'grew 1 -> 2 (goodput: predicted goodput x1.8, 2 CPU slots idle); checkpoint-restart',
});
const latest = {
  time_s: 1,
  step: 10,
  num_nodes: 1,
  num_replicas: 2,
  local_bsz: 64,
  accum_steps: 1,
  step_time_s: 0.5,
  sync_time_s: 0,
};

function detail(device_kind: 'gpu' | 'cpu'): JobDetail {
  return jobDetailFixture(record, { device_kind }, latest);
}

describe('goodput show / ls in plain words', () => {
  it('shows batch shape, learning rate, goodput, speedups, the environment and device-s in the right unit', () => {
    const text = renderJob(detail('cpu'), [
      {
        id: 1,
        job_id: 'ab12',
        at: '2026-01-01T10:00:00.000Z',
        actor: 'scheduler',
        kind: 'rescale',
        from_state: 'running',
        to_state: 'rescaling',
        reason: record.reason,
        data: {},
      },
    ]);
    assert.match(
      text,
      /^batch\s+256 = 64 local x 2 accumulation steps x 2 replicas; learning rate x\d\.\d\d \(AdaScale\)$/m,
    );
    assert.match(
      text,
      /^goodput\s+throughput 512 samples\/s x statistical efficiency 0\.\d\d = goodput \d+ \(initial-batch samples\/s\)$/m,
    );
    assert.match(
      text,
      /^speedup\s+predicted x\d\.\d\d now over 1 replica, best x\d\.\d\d on \d replicas? \(batch \d+\)$/m,
    );
    assert.match(text, /^command .* \(venv \/w\/\.venv\)$/m);
    assert.match(text, /12\.5 slot-s used/);
    assert.doesNotMatch(text, /GPU-s|alpha_c|sqr=/);
    assert.match(text, /10:00:00\s+scheduler\s+rescale\s+running->rescaling\s+grew 1 -> 2/);
    assert.match(renderJob(detail('gpu'), []), /12\.5 GPU-s used/);
  });

  it('shows the 15 newest events and says how many earlier ones --json has', () => {
    const event = (id: number): EventView => ({
      id,
      job_id: 'ab12',
      at: `2026-01-01T10:00:${String(id).padStart(2, '0')}.000Z`,
      actor: 'scheduler',
      kind: 'rescale',
      from_state: 'running',
      to_state: 'rescaling',
      reason: `change ${id}`,
      data: {},
    });
    const text = renderJob(
      detail('cpu'),
      Array.from({ length: 22 }, (_, i) => event(i)),
    );
    assert.doesNotMatch(text, /change 6\b/);
    assert.match(text, /change 7\b[\s\S]*change 21\b/);
    assert.match(text, /\(7 earlier events not shown; 'goodput show digits --json' has them all\)/);
    assert.doesNotMatch(renderJob(detail('cpu'), [event(1)]), /earlier events/);
  });

  it('lists batch, goodput and speedup per job', () => {
    const table = renderJobList([detail('cpu')], 0);
    assert.match(
      table,
      /^ID\s+NAME\s+USER\s+STATE\s+REPLICAS\s+RESTARTS\s+BATCH\s+GOODPUT\s+SPEEDUP\s+STEP\s+SUBMITTED\s+NOTE$/m,
    );
    assert.match(renderJobList([], 0), /^no jobs yet; submit one with 'goodput submit/);
    assert.match(
      table,
      /^ab12\s+digits\s+u\s+running\s+2\s+1\s+256 \(64x2x2\)\s+\d+\/s\s+x\d\.\d\d \(best x\d\.\d\d on \d\)\s+10\s+0s ago$/m,
    );
  });

  it("says the doctor's verdict from the job's own step breakdowns", () => {
    const report = (step: number, data_wait_s: number) => ({
      step,
      breakdown: { data_wait_s, forward_backward_s: 0.06, sync_s: 0, optimizer_s: 0.01 },
    });
    const text = renderJob(detail('cpu'), [], [report(1, 0.05), report(2, 0.05)]);
    assert.match(
      text,
      /^doctor\s+this job waits on data 41\.7% of each step \(last 2 reported steps\): raise DataLoader num_workers/m,
    );
    assert.match(renderJob(detail('cpu'), []), /^doctor\s+no step breakdown reported yet/m);
  });

  it("the doctor line reads the reports' host threads and time between steps", () => {
    const host = { cpu_count: 2, torch_threads: 16, local_processes: 1, dataloader_workers: 0 };
    const report = (step: number, between_steps_s: number) => ({
      step,
      host,
      breakdown: { data_wait_s: 0, forward_backward_s: 0.06, sync_s: 0, optimizer_s: 0.01, between_steps_s },
    });
    assert.match(
      renderJob(detail('cpu'), [], [report(1, 0), report(2, 0)]),
      /^doctor\s+CPU threads oversubscribed: 1 process\(es\) x \(16 torch threads/m,
    );
    const sync = (step: number) => ({
      step,
      breakdown: { data_wait_s: 0, forward_backward_s: 0.06, sync_s: 0, optimizer_s: 0.01, between_steps_s: 0.2 },
    });
    assert.match(
      renderJob(detail('cpu'), [], [sync(1), sync(2)]),
      /^doctor\s+this job spends 74\.1% of each step between steps/m,
    );
  });
});
