/**
 * Jobs page: a sortable, filterable table of the newest jobs, one page from the server (the
 * state filter is the server's, so a store of any size costs one page), more on demand. Only
 * the rows in view are in the DOM (fixed row height), so thousands of jobs scroll and update as
 * fast as a few.
 */
import { useMemo, useState } from 'preact/hooks';
import type { JobRow, JobsResponse } from '../../src/dashboard/types.js';
import { getJson } from '../api.js';
import { fmtNumber, fmtPercent, fmtTime } from '../format.js';
import { usePoll } from '../poll.js';
import { ErrorLine, go } from '../shell.js';

const ROW_H = 28;
/** Jobs fetched at first and added by each 'more'. */
const PAGE_JOBS = 200;
const VIEW_H = 560;

interface Column {
  key: keyof JobRow;
  label: string;
  cell: (r: JobRow) => string;
  numeric?: boolean;
}

const COLUMNS: Column[] = [
  { key: 'name', label: 'job', cell: (r) => r.name },
  { key: 'user', label: 'user', cell: (r) => r.user },
  { key: 'state', label: 'state', cell: (r) => r.state },
  { key: 'replicas', label: 'replicas', cell: (r) => String(r.replicas), numeric: true },
  { key: 'batch_size', label: 'batch', cell: (r) => fmtNumber(r.batch_size), numeric: true },
  { key: 'goodput', label: 'goodput', cell: (r) => fmtNumber(r.goodput), numeric: true },
  {
    key: 'speedup',
    label: 'speedup',
    cell: (r) => (r.speedup === null ? '–' : `${r.speedup.toFixed(2)}x`),
    numeric: true,
  },
  { key: 'progress', label: 'progress', cell: (r) => fmtPercent(r.progress), numeric: true },
  { key: 'eta_ms', label: 'est. finish', cell: (r) => fmtTime(r.eta_ms) },
  { key: 'restarts', label: 'restarts', cell: (r) => String(r.restarts), numeric: true },
  { key: 'reason', label: 'reason', cell: (r) => r.reason },
];

const STATES = [
  '',
  'queued',
  'starting',
  'running',
  'rescaling',
  'preempted',
  'succeeded',
  'failed',
  'cancelled',
  'active',
];

function compare(a: JobRow, b: JobRow, key: keyof JobRow): number {
  const x = a[key];
  const y = b[key];
  if (x === y) return 0;
  if (x === null) return 1;
  if (y === null) return -1;
  return x < y ? -1 : 1;
}

export function JobsPage() {
  const [sort, setSort] = useState<{ key: keyof JobRow; desc: boolean }>({ key: 'submitted_ms', desc: true });
  const [text, setText] = useState('');
  const [state, setState] = useState('');
  const [shown, setShown] = useState(PAGE_JOBS);
  const [top, setTop] = useState(0);
  const query = `/dash/jobs?limit=${shown}${state === '' ? '' : `&state=${state}`}`;
  const { data, error } = usePoll(() => getJson<JobsResponse>(query), 3000, query);

  const rows = useMemo(() => {
    if (!data) return [];
    const q = text.trim().toLowerCase();
    const kept = data.rows.filter(
      (r) => q === '' || `${r.id} ${r.name} ${r.user} ${r.reason}`.toLowerCase().includes(q),
    );
    kept.sort((a, b) => (sort.desc ? -1 : 1) * compare(a, b, sort.key));
    return kept;
  }, [data, text, sort]);

  if (!data) return <ErrorLine error={error} loading />;
  const first = Math.max(0, Math.floor(top / ROW_H) - 5);
  const last = Math.min(rows.length, first + Math.ceil(VIEW_H / ROW_H) + 10);
  const template = '2fr 1fr 1fr 0.7fr 0.8fr 0.9fr 0.8fr 0.8fr 1fr 0.7fr 3fr';
  return (
    <div class="page">
      <ErrorLine error={error} />
      <div class="toolbar">
        <input
          type="search"
          placeholder="filter: name, id, user, reason"
          value={text}
          onInput={(e) => setText((e.target as HTMLInputElement).value)}
        />
        <select value={state} onChange={(e) => setState((e.target as HTMLSelectElement).value)} aria-label="state">
          {STATES.map((s) => (
            <option value={s}>{s === '' ? 'all states' : s}</option>
          ))}
        </select>
        <span class="muted" id="job-count">
          {rows.length} of {data.rows.length}
          {data.next_cursor !== null ? '+' : ''} jobs
        </span>
        {data.next_cursor !== null && shown < 1000 && (
          <button id="more-jobs" onClick={() => setShown((n) => Math.min(1000, n + PAGE_JOBS))}>
            more
          </button>
        )}
      </div>
      <div class="table">
        <div class="thead" style={{ gridTemplateColumns: template }}>
          {COLUMNS.map((c) => (
            <div
              class={`th ${c.numeric ? 'num' : ''}`}
              onClick={() => setSort((s) => ({ key: c.key, desc: s.key === c.key ? !s.desc : c.numeric === true }))}
            >
              {c.label}
              {sort.key === c.key ? (sort.desc ? ' ▼' : ' ▲') : ''}
            </div>
          ))}
        </div>
        <div
          class="tbody"
          style={{ height: `${Math.min(VIEW_H, Math.max(ROW_H, rows.length * ROW_H))}px` }}
          onScroll={(e) => setTop((e.target as HTMLDivElement).scrollTop)}
        >
          <div style={{ height: `${rows.length * ROW_H}px`, position: 'relative' }}>
            {rows.slice(first, last).map((r, i) => (
              <div
                class="tr"
                data-job-id={r.id}
                key={r.id}
                style={{ top: `${(first + i) * ROW_H}px`, gridTemplateColumns: template }}
                onClick={() => go(`/job/${r.id}`)}
              >
                {COLUMNS.map((c) => (
                  <div
                    class={`td ${c.numeric ? 'num' : ''} ${c.key === 'state' ? `state-${r.state}` : ''}`}
                    title={c.cell(r)}
                  >
                    {c.cell(r)}
                  </div>
                ))}
              </div>
            ))}
          </div>
        </div>
      </div>
      {rows.length === 0 && <div class="muted">no jobs{data.rows.length > 0 ? ' match the filter' : ''}</div>}
    </div>
  );
}
