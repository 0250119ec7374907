import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cpuSlots } from '../backends/local/devices.js';
import { LocalBackend } from '../backends/local/local-backend.js';
import { Controller } from '../control/controller.js';
import { hashToken, jobToken } from '../control/tokens.js';
import { findPolicy, policyNames } from '../policy/registry.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { createApp } from './app.js';
import { callApp } from './testing/in-process.js';
import { limitsFixture } from '../goodput/testing/perf-fixture.js';

const dir = mkdtempSync(join(tmpdir(), 'goodput-api-'));
const secret = 'test-secret';
const store = new SqliteStore(join(dir, 'db.sqlite'));
const backend = new LocalBackend({ devices: cpuSlots(2) });
const policy = (findPolicy('fifo') ?? findPolicy(policyNames()[0]!)!).create({ seed: 0 });
// Not started: no rounds run, so nothing is launched; the API and the store are what is tested.
// refit_interval_s 0: every report refits the model, and a predicted batch gain needs no time to persist.
const controller = new Controller({
  store,
  backend,
  policy,
  data_dir: dir,
  secret,
  api_url: '',
  interval_s: 60,
  grace_s: 1,
  refit_interval_s: 0,
});
const app = createApp({ store, controller, secret, version: 'test' });
const ADMIN = 'gpa_admin';

after(async () => {
  await controller.stop();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const call = (method: string, path: string, token?: string, body?: unknown) => callApp(app, method, path, token, body);

const limits = limitsFixture();
const measurement = (step: number, replicas: number, local_bsz: number, step_time_s: number) => ({
  time_s: 1e9 + step,
  step,
  epoch: 0,
  num_nodes: 1,
  num_replicas: replicas,
  local_bsz,
  accum_steps: 0,
  step_time_s,
  sync_time_s: 0.01 * (replicas - 1),
  grad_sqr: 1,
  grad_var: 20,
  samples: step * local_bsz * replicas,
  loss: 1,
});

describe('HTTP API (in-process)', () => {
  let alice = '';
  let bob = '';
  let aliceJob = '';
  let bobJob = '';

  before(async () => {
    await store.putToken({ hash: hashToken(ADMIN), user: 'admin', admin: true, created_at_ms: 0 });
  });

  it('serves health and the OpenAPI document without a token; everything else needs one (401)', async () => {
    assert.equal((await call('GET', '/v1/health')).status, 200);
    const doc = await call('GET', '/v1/openapi.json');
    assert.equal(doc.status, 200);
    assert.equal(doc.json.openapi, '3.1.0');
    assert.ok(doc.json.paths['/v1/jobs/{id}/reports'].post);
    assert.ok(doc.json.components.schemas.JobSpec.properties.command);
    assert.match(
      doc.json.components.schemas.ReportBody.properties.reports.items.properties.remaining_samples.description,
      /training samples/,
    );
    for (const path of ['/v1/jobs', '/v1/nodes']) {
      const r = await call('GET', path);
      assert.equal(r.status, 401);
      assert.equal(r.json.error.code, 'E_UNAUTHORIZED');
    }
    assert.equal((await call('GET', '/v1/jobs', 'gpu_wrong')).status, 401);
    assert.equal(
      (await call('GET', '/v1/jobs', jobToken('other-secret', 'abc'))).status,
      401,
      'a job token signed with another secret',
    );
  });

  it('lets the admin create user tokens, and only the admin', async () => {
    const a = await call('POST', '/v1/tokens', ADMIN, { user: 'alice' });
    assert.equal(a.status, 201);
    alice = a.json.token;
    bob = (await call('POST', '/v1/tokens', ADMIN, { user: 'bob' })).json.token;
    assert.equal((await call('POST', '/v1/tokens', alice, { user: 'eve' })).status, 403);
  });

  it('refuses a bad spec naming every bad field', async () => {
    const r = await call('POST', '/v1/jobs', alice, {
      name: 'bad name!',
      command: [],
      max_replicas: 0,
      min_replicas: -1,
      priority: 1.5,
      colour: 'red',
      env: { RANK: '3' },
    });
    assert.equal(r.status, 400);
    assert.equal(r.json.error.code, 'E_SPEC');
    for (const field of ['name', 'command', 'max_replicas', 'min_replicas', 'priority', 'colour', 'env.RANK'])
      assert.match(r.json.error.message, new RegExp(field.replace('.', '\\.')), field);
    assert.equal((await call('POST', '/v1/jobs', alice, '{not json')).status, 400);
    const wd = await call('POST', '/v1/jobs', alice, { name: 'x', command: ['true'], workdir: join(dir, 'nope') });
    assert.equal(wd.status, 400);
    assert.match(wd.json.error.message, /workdir/);
  });

  it('makes users own their jobs', async () => {
    const a = await call('POST', '/v1/jobs', alice, {
      name: 'a-job',
      command: ['true'],
      workdir: dir,
      max_replicas: 2,
    });
    assert.equal(a.status, 201);
    assert.equal(a.json.user, 'alice');
    assert.equal(a.json.state, 'queued');
    aliceJob = a.json.id;
    bobJob = (await call('POST', '/v1/jobs', bob, { name: 'b-job', command: ['true'], workdir: dir })).json.id;
    assert.equal(
      (await call('POST', '/v1/jobs', bob, { name: 'x', command: ['true'], workdir: dir, user: 'alice' })).status,
      403,
      'bob cannot submit as alice',
    );
    assert.deepEqual(
      (await call('GET', '/v1/jobs', bob)).json.map((j: { id: string }) => j.id),
      [bobJob],
    );
    assert.equal((await call('GET', '/v1/jobs', ADMIN)).json.length, 2);
    assert.equal((await call('GET', `/v1/jobs/${aliceJob}`, bob)).status, 404, "another user's job is not found");
    assert.equal((await call('GET', '/v1/jobs/a-job', alice)).json.id, aliceJob, 'a job can be named by its name');
    const denied = await call('POST', `/v1/jobs/${aliceJob}/cancel`, bob);
    assert.equal(denied.status, 404);
    assert.equal(denied.json.error.code, 'E_NOT_FOUND');
    assert.equal((await store.getJob(aliceJob))!.state, 'queued', "bob's cancel changed nothing");
  });

  it('accepts reports only with the job own token and answers a configuration', async () => {
    const token = jobToken(secret, aliceJob);
    const body = { attempt: 0, limits, reports: [measurement(1, 1, 64, 0.1), measurement(2, 1, 64, 0.1)] };
    assert.equal((await call('POST', `/v1/jobs/${aliceJob}/reports`, undefined, body)).status, 401);
    assert.equal((await call('POST', `/v1/jobs/${bobJob}/reports`, token, body)).status, 403, 'token of another job');
    assert.equal(
      (await call('POST', `/v1/jobs/${aliceJob}/reports`, alice, body)).status,
      403,
      'user tokens do not report',
    );
    assert.equal((await call('POST', '/v1/jobs/ffffffff/reports', jobToken(secret, 'ffffffff'), body)).status, 404);
    const bad = await call('POST', `/v1/jobs/${aliceJob}/reports`, token, { attempt: 0, reports: [{ step: 'x' }] });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.code, 'E_BAD_REQUEST');
    assert.equal((await call('GET', '/v1/jobs', token)).status, 403, 'a job token cannot list jobs');
    const hugeBody = JSON.stringify({ attempt: 0, reports: [], pad: 'x'.repeat(5 << 20) });
    const huge = await app.request(`/v1/jobs/${aliceJob}/reports`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'content-length': String(hugeBody.length),
      },
      body: hugeBody,
    });
    assert.equal(huge.status, 413);
    assert.match(((await huge.json()) as { error: { message: string } }).error.message, /larger than/);
    const outOfBounds: [string, unknown, RegExp][] = [
      [
        'a local batch above max_local_bsz',
        { ...body, reports: [measurement(1, 1, 1024, 0.1)] },
        /local_bsz: 1024 is more than max_local_bsz \(512\)/,
      ],
      [
        'more replicas than max_replicas',
        { ...body, reports: [measurement(1, 9, 64, 0.1)] },
        /num_replicas: 9 is more than the job's max_replicas/,
      ],
      ['an attempt never launched', { ...body, attempt: 5 }, /attempt: 5 was never launched/],
      ['a step time over a day', { ...body, reports: [measurement(1, 1, 64, 1e6)] }, /step_time_s/],
      ['a local batch past the sane limit', { ...body, reports: [measurement(1, 1, 2 ** 30, 0.1)] }, /local_bsz/],
      [
        'more nodes than replicas',
        { ...body, reports: [{ ...measurement(1, 1, 64, 0.1), num_nodes: 2 }] },
        /num_nodes/,
      ],
    ];
    for (const [what, wrong, message] of outOfBounds) {
      const refused = await call('POST', `/v1/jobs/${aliceJob}/reports`, token, wrong);
      assert.equal(refused.status, 400, what);
      assert.match(refused.json.error.message, message, what);
    }
    assert.equal((await store.getJob(aliceJob))!.step, 0, 'refused reports change nothing');
    const ok = await call('POST', `/v1/jobs/${aliceJob}/reports`, token, body);
    assert.equal(ok.status, 200);
    // Raw JSON: 1e999 parses to Infinity, which JSON.stringify cannot produce.
    const template = JSON.stringify({
      attempt: 1,
      reports: [{ ...measurement(3, 2, 64, 0.11), remaining_samples: '@' }],
    });
    for (const value of ['-1', '1e999', '"many"']) {
      const rejected = await call('POST', `/v1/jobs/${aliceJob}/reports`, token, template.replace('"@"', value));
      assert.equal(rejected.status, 400, `remaining_samples ${value} is refused`);
      assert.equal(rejected.json.error.code, 'E_BAD_REQUEST');
      assert.match(rejected.json.error.message, /remaining_samples/);
    }
    assert.equal((await store.getJob(aliceJob))!.remaining_samples, null, 'not reported yet');
    const two = await call('POST', `/v1/jobs/${aliceJob}/reports`, token, {
      attempt: 0,
      reports: [
        { ...measurement(3, 2, 64, 0.11), remaining_samples: 9000 },
        { ...measurement(4, 2, 128, 0.2), remaining_samples: 8744 },
      ],
    });
    const config = two.json.config as { local_bsz: number; accum_steps: number; batch_size: number; lr_scale: number };
    assert.equal(config.batch_size, config.local_bsz * 2 * (config.accum_steps + 1));
    assert.ok(config.local_bsz >= limits.min_local_bsz && config.local_bsz <= limits.max_local_bsz);
    assert.ok(config.batch_size >= limits.init_batch_size && config.batch_size <= limits.max_batch_size);
    assert.ok(config.lr_scale >= 1 && config.lr_scale <= config.batch_size / limits.init_batch_size + 1e-9);
    const job = (await call('GET', `/v1/jobs/${aliceJob}`, alice)).json;
    assert.equal(job.step, 4);
    assert.ok(job.perf && job.perf.beta_c > 0, 'the perf model was fitted');
    assert.deepEqual(job.limits, limits);
    assert.equal(job.remaining_samples, 8744, 'the newest entry wins');
    assert.equal((await store.getJob(aliceJob))!.remaining_samples, 8744);
    assert.equal((await call('GET', `/v1/jobs/${aliceJob}/reports`, alice)).json.length, 4);
    // The latest measurement in the user's terms, in the job view and in /metrics.
    assert.deepEqual(job.insight.batch, { local_bsz: 128, accum_steps: 0, replicas: 2, total: 256 });
    assert.equal(job.insight.throughput_samples_s, 256 / 0.2);
    assert.ok(job.insight.efficiency > 0 && job.insight.efficiency <= 1);
    assert.ok(Math.abs(job.insight.goodput - job.insight.throughput_samples_s * job.insight.efficiency) < 1e-6);
    assert.ok(job.insight.predicted.replicas >= 1 && job.insight.predicted.speedup >= 1);
    assert.doesNotMatch(
      (await call('GET', '/metrics')).text,
      /job="|user="|name="/,
      'without the admin token: no job, name or user',
    );
    assert.doesNotMatch((await call('GET', '/metrics', alice)).text, /job="/, 'a user token is not enough');
    const metrics = (await call('GET', '/metrics', ADMIN)).text;
    const labels = `job="${aliceJob}",name="a-job",user="alice"`;
    assert.match(metrics, new RegExp(`^goodput_job_batch_size\\{${labels}\\} 256$`, 'm'));
    assert.match(metrics, new RegExp(`^goodput_job_throughput_samples_per_second\\{${labels}\\} 1280$`, 'm'));
    assert.match(metrics, new RegExp(`^goodput_job_replicas\\{${labels}\\} 0$`, 'm'));
    assert.match(metrics, new RegExp(`^goodput_job_goodput\\{${labels}\\} ${job.insight.goodput}$`, 'm'));
    assert.match(metrics, /^# TYPE goodput_job_statistical_efficiency gauge$/m);
    assert.doesNotMatch(metrics, new RegExp(`goodput_job_batch_size\\{job="${bobJob}"`), 'no series before a report');
    // Each new batch decision is one event, with its reason in words.
    const batchEvents = (
      (await call('GET', `/v1/jobs/${aliceJob}/events`, alice)).json as { kind: string; reason: string }[]
    ).filter((e) => e.kind === 'batch-size');
    assert.ok(batchEvents.length >= 1, 'the answered configuration differs from the measured one');
    assert.match(
      batchEvents.at(-1)!.reason,
      /^batch size (grew|shrank|reshaped) \d+ -> \d+ \(\d+ x \d+ x \d+, local x accumulation x replicas\), learning rate x[\d.]+ \(AdaScale\): predicted goodput x[\d.]+(, 80% between x[\d.]+ and x[\d.]+,)? relative to batch \d+ \(\d+ x \d+ x \d+\) in force, statistical efficiency [\d.]+$/,
    );
  });

  it('cancels the owner job; reads logs only by replica number; exposes metrics', async () => {
    const r = await call('POST', `/v1/jobs/${aliceJob}/cancel`, alice);
    assert.equal(r.status, 200);
    assert.equal(r.json.state, 'cancelled');
    const again = await call('POST', `/v1/jobs/${aliceJob}/cancel`, alice);
    assert.equal(again.status, 409, 'cancel of a finished job');
    assert.match(again.json.error.message, /already cancelled at .*; there is nothing to cancel/);
    const late = await call('POST', `/v1/jobs/${aliceJob}/reports`, jobToken(secret, aliceJob), {
      attempt: 0,
      reports: [measurement(9, 1, 64, 0.1)],
    });
    assert.equal(late.status, 409, 'a report for an ended job');
    assert.equal(late.json.error.code, 'E_CONFLICT');
    assert.equal((await store.getJob(aliceJob))!.step, 4, 'and it changed nothing');
    const infeasible = await call('POST', '/v1/jobs', alice, {
      name: 'big',
      command: ['true'],
      workdir: dir,
      min_replicas: 3,
      max_replicas: 3,
    });
    assert.equal(infeasible.status, 422);
    assert.equal(infeasible.json.error.code, 'E_INFEASIBLE');
    assert.match(infeasible.json.error.message, /at least 3 replicas .* this cluster has 2 CPU slot\(s\)/);
    assert.equal((await call('GET', `/v1/jobs/${aliceJob}/logs?replica=../../secret`, alice)).status, 400);
    const logs = await call('GET', `/v1/jobs/${aliceJob}/logs?replica=0`, alice);
    assert.equal(logs.status, 200);
    assert.equal(logs.text, '');
    const beyond = await call(
      'GET',
      `/v1/jobs/${aliceJob}/logs?replica=${(await store.getJob(aliceJob))!.spec.max_replicas}`,
      alice,
    );
    assert.equal(beyond.status, 404, 'a replica rank the job can never run');
    assert.equal(beyond.json.error.code, 'E_NOT_FOUND');
    assert.match(beyond.json.error.message, /runs at most \d+ replica\(s\), ranks 0\.\.\d+; there is no replica \d+/);
    const events = (await call('GET', `/v1/jobs/${aliceJob}/events`, alice)).json as { kind: string; actor: string }[];
    assert.deepEqual(
      events.filter((e) => e.kind !== 'batch-size').map((e) => `${e.kind}/${e.actor}`),
      ['submitted/alice', 'cancelled/alice'],
    );
    const metrics = await call('GET', '/metrics');
    assert.match(metrics.text, /^goodput_jobs\{state="cancelled"\} 1$/m);
    assert.match(metrics.text, /^goodput_jobs\{state="queued"\} 1$/m);
    assert.match(metrics.text, /^goodput_reports_total 4$/m);
    assert.match(metrics.text, /^goodput_gpus_total 2$/m);
    const nodes = await call('GET', '/v1/nodes', bob);
    assert.equal(nodes.json[0].devices.length, 2);
  });

  it('accepts the model parameter count as a positive integer and refuses anything else (E_BAD_REQUEST)', async () => {
    const token = jobToken(secret, bobJob);
    const template = JSON.stringify({
      attempt: 0,
      reports: [{ ...measurement(5, 1, 64, 0.1), model_parameters: '@' }],
    });
    for (const value of ['0', '-5', '1.5', '"11M"', 'true', '1e999', '1e16']) {
      const rejected = await call('POST', `/v1/jobs/${bobJob}/reports`, token, template.replace('"@"', value));
      assert.equal(rejected.status, 400, `model_parameters ${value} is refused`);
      assert.equal(rejected.json.error.code, 'E_BAD_REQUEST');
      assert.match(
        rejected.json.error.message,
        /reports\.0\.model_parameters: expected (a positive integer|at most)/,
        value,
      );
    }
    assert.equal((await store.getJob(bobJob))!.model_parameters, null, 'refused reports change nothing');
    const ok = await call('POST', `/v1/jobs/${bobJob}/reports`, token, JSON.parse(template.replace('"@"', '11181642')));
    assert.equal(ok.status, 200);
    assert.equal((await store.getJob(bobJob))!.model_parameters, 11181642);
    assert.equal(
      (await call('POST', `/v1/jobs/${bobJob}/reports`, token, JSON.parse(template.replace('"@"', 'null')))).status,
      200,
      'null: unknown',
    );
    assert.equal((await store.getJob(bobJob))!.model_parameters, 11181642, 'unknown keeps the last known count');
    assert.equal(
      (await call('GET', `/v1/jobs/${bobJob}/reports`, bob)).json.at(-2).model_parameters,
      11181642,
      'stored with the report',
    );
    const doc = (await call('GET', '/v1/openapi.json')).json;
    assert.match(
      doc.components.schemas.ReportBody.properties.reports.items.properties.model_parameters.description,
      /Parameter count/,
      'published in the OpenAPI document',
    );
  });

  it("stores the host's CPU threads with a report (the live doctor reads them) and refuses malformed ones", async () => {
    const token = jobToken(secret, bobJob);
    const host = { cpu_count: 2, torch_threads: 16, local_processes: 1, dataloader_workers: 0 };
    const ok = await call('POST', `/v1/jobs/${bobJob}/reports`, token, {
      attempt: 0,
      reports: [{ ...measurement(9, 1, 64, 0.1), host }],
    });
    assert.equal(ok.status, 200);
    assert.deepEqual((await call('GET', `/v1/jobs/${bobJob}/reports`, bob)).json.at(-1).host, host);
    const bad = await call('POST', `/v1/jobs/${bobJob}/reports`, token, {
      attempt: 0,
      reports: [{ ...measurement(10, 1, 64, 0.1), host: { ...host, cpu_count: 0 } }],
    });
    assert.equal(bad.status, 400);
    assert.match(bad.json.error.message, /reports\.0\.host\.cpu_count/);
    // The backend's name is diagnostic: kept when well-formed, dropped (not refused) otherwise.
    const gloo = await call('POST', `/v1/jobs/${bobJob}/reports`, token, {
      attempt: 0,
      reports: [{ ...measurement(11, 1, 64, 0.1), host: { ...host, dist_backend: 'gloo' } }],
    });
    assert.equal(gloo.status, 200);
    assert.deepEqual((await call('GET', `/v1/jobs/${bobJob}/reports`, bob)).json.at(-1).host, {
      ...host,
      dist_backend: 'gloo',
    });
    const odd = await call('POST', `/v1/jobs/${bobJob}/reports`, token, {
      attempt: 0,
      reports: [{ ...measurement(12, 1, 64, 0.1), host: { ...host, dist_backend: 'n'.repeat(41) } }],
    });
    assert.equal(odd.status, 200);
    assert.deepEqual((await call('GET', `/v1/jobs/${bobJob}/reports`, bob)).json.at(-1).host, host);
  });
});
