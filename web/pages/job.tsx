/** Job page: its state, charts over time, the events with each decision's reason, the log tail, cancel. */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { EventView, JobDetail } from '../../src/api/views.js';
import type { JobSeries, WhoAmI } from '../../src/dashboard/types.js';
import { liveDoctorLine, liveVerdict, type LiveReport } from '../../src/doctor/live.js';
import { callApi, getJson, request } from '../api.js';
import { Chart, type ChartSeries } from '../chart.js';
import { fmtNumber, fmtTime } from '../format.js';
import { usePoll } from '../poll.js';
import { ErrorLine } from '../shell.js';
import { RanksBox } from './ranks-box.js';

const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);
const LOG_KEEP = 64 * 1024;

export function JobPage(p: { id: string; me: WhoAmI }) {
  const base = `/v1/jobs/${encodeURIComponent(p.id)}`;
  const job = usePoll(() => callApi('GET /v1/jobs/{id}', { id: p.id }), 2000, `job-${p.id}`);
  const series = usePoll(
    () => getJson<JobSeries>(`/dash/jobs/${encodeURIComponent(p.id)}/series`),
    3000,
    `series-${p.id}`,
  );
  const events = usePoll(() => callApi('GET /v1/jobs/{id}/events', { id: p.id }), 3000, `events-${p.id}`);
  const reports = usePoll(() => getJson<LiveReport[]>(`${base}/reports?limit=200`), 5000, `reports-${p.id}`);
  const doctor = liveVerdict(reports.data ?? []);
  const [cancelError, setCancelError] = useState<Error | undefined>();
  const j = job.data;
  if (!j) return <ErrorLine error={job.error} loading />;
  // Cleared when its evidence is stale: the job ended, or runs at another size than its reports measured.
  const doctorLine = liveDoctorLine(reports.data ?? [], j);
  // A plain script (submitted or detected as not using the SDK) never reports: no charts, no plan.
  const plain = j.spec.sdk === false && j.step === 0 && (series.data?.t_ms.length ?? 0) === 0;
  const mayCancel = !TERMINAL.has(j.state) && (p.me.admin || p.me.user === j.user);
  const cancel = async () => {
    if (!confirm(`Cancel job ${j.name} (${j.id})?`)) return;
    try {
      await callApi('POST /v1/jobs/{id}/cancel', { id: p.id });
      setCancelError(undefined);
    } catch (error) {
      setCancelError(error as Error);
    }
  };
  return (
    <div class="page">
      <div class="job-head">
        <h2>
          {j.name} <span class="muted">{j.id}</span>
        </h2>
        <span class={`badge state-${j.state}`} id="job-state">
          {j.state}
        </span>
        {mayCancel && (
          <button class="danger" id="cancel" onClick={() => void cancel()}>
            Cancel job
          </button>
        )}
      </div>
      <ErrorLine error={job.error ?? cancelError} />
      <div class="facts">
        <Fact label="user" value={j.user} />
        <Fact label="replicas" value={`${j.replicas} (${j.spec.min_replicas}–${j.spec.max_replicas})`} />
        <Fact id="job-devices" label="runs on" value={placedOn(j)} />
        {j.gpu_type !== null && <Fact id="job-gpu-type" label="GPU type" value={j.gpu_type} />}
        {j.insight.batch && (
          <Fact
            id="job-batch"
            label="batch (local x accumulation x replicas)"
            value={batchText(j.insight.batch, j.insight.lr_scale)}
          />
        )}
        <Fact label="step" value={fmtNumber(j.step)} />
        <Fact label="samples" value={fmtNumber(j.samples)} />
        <Fact label="restarts" value={String(j.restarts)} />
        <Fact label="submitted" value={fmtTime(Date.parse(j.submitted_at))} />
        <Fact label="reason" value={j.rejection ? `${j.rejection.message} (${j.rejection.code})` : j.reason} />
        {plain ? (
          <Fact label="profile key" value={`${j.profile_key} (a plain script measures nothing: no plan)`} />
        ) : (
          <div class="fact">
            <div class="muted">profile key</div>
            <a id="job-plan" href={`#/plan/${encodeURIComponent(j.profile_key)}`}>
              {j.profile_key}: plan
            </a>
          </div>
        )}
      </div>
      <div class="fact" id="doctor" data-verdict={doctor && doctorLine === doctor.line ? doctor.verdict : ''}>
        <div class="muted">doctor (from this job's step breakdowns, updated as it runs)</div>
        <div>{doctorLine}</div>
      </div>
      <RanksBox id={j.id} live={!TERMINAL.has(j.state)} />
      <Charts series={series.data} marks={decisionTimes(events.data ?? [])} plain={plain} />
      <div class="two">
        <section>
          <h3>Events</h3>
          <Events events={events.data ?? []} />
        </section>
        <section>
          <h3>Log</h3>
          <LogTail base={base} replicas={Math.max(1, j.current_replicas.length)} live={!TERMINAL.has(j.state)} />
        </section>
      </div>
    </div>
  );
}

/**
 * The batch in force and its learning-rate scale, as `goodput show` prints them: those of the
 * newest batch-size event when it is in force (control/loop/insight.ts), so header and events agree.
 */
function batchText(b: NonNullable<JobDetail['insight']['batch']>, lr_scale: number | null): string {
  const lr = lr_scale === null ? '' : `, learning rate x${lr_scale.toFixed(2)}`;
  return `${b.total} = ${b.local_bsz} x ${b.accum_steps + 1} x ${b.replicas}${lr}`;
}

/** Where the job runs now, in words: "CPU slot 0", "GPUs 0, 1" ("DEVICES 0" read as a count). */
function placedOn(j: JobDetail): string {
  if (j.devices.length === 0) return 'nothing now';
  const unit = j.device_kind === 'gpu' ? 'GPU' : 'CPU slot';
  return `${unit}${j.devices.length > 1 ? 's' : ''} ${j.devices.join(', ')}`;
}

function Fact(p: { label: string; value: string; id?: string }) {
  return (
    <div class="fact" id={p.id}>
      <div class="muted">{p.label}</div>
      <div>{p.value}</div>
    </div>
  );
}

/** Decisions that change a job's configuration, marked on every chart (seconds). */
const MARKED = new Set(['rescale', 'failed-replica', 'requeued']);
function decisionTimes(events: readonly EventView[]): number[] {
  return events.filter((e) => MARKED.has(e.kind)).map((e) => Date.parse(e.at) / 1000);
}

function Charts(p: { series: JobSeries | undefined; marks: number[]; plain: boolean }) {
  const s = p.series;
  if (!s) return <div class="muted">loading charts…</div>;
  if (p.plain)
    return (
      <div class="muted" id="no-charts">
        no charts: a plain script does not report through the Goodput SDK (docs/sdk.md), so there is no throughput or
        batch to draw; its events and log are below
      </div>
    );
  if (s.t_ms.length === 0)
    return (
      <div class="muted" id="no-charts">
        no reports yet: charts appear once the job reports through the Goodput SDK (docs/contract.md)
      </div>
    );
  const x = s.t_ms.map((t) => t / 1000);
  // The measured rates, one line each, that make goodput: throughput x statistical efficiency.
  const single: [string, ChartSeries][] = [
    ['Throughput (samples/s)', { label: 'throughput', values: s.throughput, color: '#1a73e8' }],
    ['Statistical efficiency', { label: 'efficiency', values: s.efficiency, color: '#9334e6' }],
    ['Goodput (B0-equivalent samples/s)', { label: 'goodput', values: s.goodput, color: '#e8710a' }],
  ];
  return (
    <div class="charts">
      <Chart
        title="Replicas"
        time
        x={x}
        marks={p.marks}
        series={[{ label: 'replicas', values: s.replicas, color: '#1a73e8', stepped: true }]}
      />
      <Chart
        title="Batch size (local x accumulation x replicas)"
        time
        log
        marks={p.marks}
        x={x}
        series={[
          { label: 'global', values: s.batch_size, color: '#d93025', stepped: true },
          { label: 'local', values: s.local_bsz, color: '#188038', stepped: true },
          {
            label: 'accumulation',
            values: s.accum_steps.map((a) => (a === null ? null : a + 1)),
            color: '#f9ab00',
            stepped: true,
          },
        ]}
      />
      {single.map(([title, series]) => (
        <Chart key={series.label} title={title} time x={x} marks={p.marks} series={[series]} />
      ))}
    </div>
  );
}

function Events(p: { events: EventView[] }) {
  return (
    <ol class="events" id="events">
      {[...p.events].reverse().map((e) => (
        <li key={e.id} data-kind={e.kind}>
          <span class="muted">{fmtTime(Date.parse(e.at))}</span> <b>{e.kind}</b>
          {e.from_state && e.to_state && e.from_state !== e.to_state ? (
            <span class="muted">
              {' '}
              {e.from_state} → {e.to_state}
            </span>
          ) : null}
          <span class="muted"> by {e.actor}</span>
          {e.reason && <div class="reason">{e.reason}</div>}
        </li>
      ))}
    </ol>
  );
}

/** The end of one replica's log, followed by offset (`x-next-offset`) while the job runs. */
function LogTail(p: { base: string; replicas: number; live: boolean }) {
  const [replica, setReplica] = useState(0);
  const [text, setText] = useState('');
  const offset = useRef(0);
  const pre = useRef<HTMLPreElement>(null);
  useEffect(() => {
    offset.current = 0;
    setText('');
    let stopped = false;
    let timer: number | undefined;
    const tick = async () => {
      try {
        for (let i = 0; i < 64 && !stopped; i++) {
          const res = await request('GET', `${p.base}/logs?replica=${replica}&offset=${offset.current}`);
          const chunk = await res.text();
          const next = Number(res.headers.get('x-next-offset') ?? offset.current);
          if (chunk) setText((t) => (t + chunk).slice(-LOG_KEEP));
          const advanced = next > offset.current;
          offset.current = next;
          if (!advanced) break;
        }
      } catch {
        // shown by the job's own polling
      }
      if (!stopped && p.live) timer = window.setTimeout(() => void tick(), 2000);
    };
    void tick();
    return () => {
      stopped = true;
      window.clearTimeout(timer);
    };
  }, [p.base, replica, p.live]);
  useEffect(() => {
    const el = pre.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [text]);
  return (
    <div>
      <select
        value={replica}
        onChange={(e) => setReplica(Number((e.target as HTMLSelectElement).value))}
        aria-label="replica"
      >
        {Array.from({ length: p.replicas }, (_, r) => (
          <option value={r}>replica {r}</option>
        ))}
      </select>
      <pre class="log" id="log" ref={pre}>
        {text || '(empty)'}
      </pre>
    </div>
  );
}
