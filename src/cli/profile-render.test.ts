import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { profileSummaryView, profileView } from '../api/profile-routes.js';
import type { EventView } from '../client/client.js';
import type { StoredKeyProfile } from '../store/types.js';
import { parameterCount, profileLine, renderProfile, renderProfileList } from './profile-render.js';

const stored: StoredKeyProfile = {
  key: 'train',
  gpu_type: 'cpu',
  jobs: 2,
  max_measured_replicas: 4,
  job_ids: ['a', 'b'],
  updated_at_ms: 0,
  points: [1, 4].map((r) => ({
    num_nodes: 1,
    num_replicas: r,
    local_bsz: 64,
    accum_step_time_s: 0.1,
    optim_step_time_s: 0.1 + 0.01 * r,
  })),
  grad: [
    { progress: 0, sqr: 1, var: 4 },
    { progress: 0.5, sqr: 0.5, var: 5 },
  ],
  perf: { alpha_c: 0.01, beta_c: 0.001, alpha_n: 0.001, beta_n: 0.001, alpha_r: 0.001, beta_r: 0.0001, gamma: 1.5 },
  limits: { init_batch_size: 64, max_batch_size: 1024, min_local_bsz: 16, max_local_bsz: 256, accumulation: true },
};
const event = (kind: EventView['kind'], reason: string, data: Record<string, unknown> = {}): EventView => ({
  id: 1,
  job_id: 'j',
  at: '2026-01-01T10:00:00.000Z',
  actor: 'scheduler',
  kind,
  from_state: 'queued',
  to_state: 'queued',
  reason,
  data,
});

describe('goodput profiles / the profile line of goodput show', () => {
  it("says whether the job's model came from its profile, and when and why it was discarded", () => {
    assert.match(
      profileLine({ profile_key: 'train', profile_use: null }, []),
      /^profile\s+'train': its own measurements only/,
    );
    assert.match(
      profileLine({ profile_key: 'train', profile_use: 'used' }, [event('profile-used', 'x', { gpu_type: 'cpu' })]),
      /^profile\s+'train': model from the profile on cpu .*'goodput profiles show train'$/,
    );
    const discarded = profileLine({ profile_key: 'train', profile_use: 'discarded' }, [
      event('profile-discarded', "profile of 'train' on cpu discarded: an optimizer step ... took 3 s"),
    ]);
    assert.equal(
      discarded,
      "profile    'train': discarded at 2026-01-01T10:00:00.000Z: an optimizer step ... took 3 s",
    );
  });

  it('lists keys with jobs, sizes and fitted throughput; shows one in full', () => {
    const list = renderProfileList([profileSummaryView(stored)], 0);
    assert.match(list, /^KEY\s+GPU TYPE\s+JOBS\s+REPLICAS\s+PARAMETERS\s+SAMPLES\/S \(FITTED\)\s+UPDATED\s+SCOPE$/m);
    assert.match(
      list,
      /^train\s+cpu\s+2\s+1,4\s+-\s+1:\S+ 4:\S+\s+0s ago\s+shared$/m,
      'no parameter count reported; a bare key is the shared profile',
    );
    assert.match(
      renderProfileList([profileSummaryView({ ...stored, key: 'train~alice' })], 0),
      /^train\s+cpu\s.*\s0s ago\s+alice$/m,
      "a user's profile names the user",
    );
    assert.match(renderProfileList([]), /^no profiles yet/);
    const text = renderProfile([profileView(stored)]);
    assert.match(text, /^profile\s+'train' on cpu: 2 jobs/m);
    assert.match(text, /^fitted\s+alpha_c=0\.0100 /m);
    assert.match(text, /^gradient\s+0%: sqr 1\.00 var 4\.00; 50%: sqr 0\.500 var 5\.00$/m);
    assert.match(text, /^1\s+4\s+64\s+0\.100\s+0\.140$/m);
    assert.match(text, /^model\s+parameters unknown/m);
    assert.equal(profileView(stored).model_parameters, null);
  });

  it("shows the model's parameter count when a job reported it: in words, and raw in JSON", () => {
    const known = { ...stored, model_parameters: 11_181_642 };
    assert.equal(profileSummaryView(known).model_parameters, 11_181_642);
    assert.equal(JSON.parse(JSON.stringify(profileView(known))).model_parameters, 11_181_642);
    assert.match(renderProfileList([profileSummaryView(known)], 0), /^train\s+cpu\s+2\s+1,4\s+11\.2 M\s+1:/m);
    assert.match(
      renderProfile([profileView(known)]),
      /^model\s+11\.2 M parameters \(11181642, as the key's latest job reported them\)$/m,
    );
    assert.deepEqual([850, 1_600_000, 25_557_032, 109_482_240, 7e9].map(parameterCount), [
      '850',
      '1.6 M',
      '25.6 M',
      '109 M',
      '7 B',
    ]);
  });
});
