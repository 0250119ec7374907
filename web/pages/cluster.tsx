/** Cluster page: nodes x devices with the job holding each, and the allocation timeline. */
import { useState } from 'preact/hooks';
import type { ClusterNode, ClusterResponse } from '../../src/dashboard/types.js';
import { getJson } from '../api.js';
import { jobColorMap } from '../../src/dashboard/colors.js';
import { usePoll } from '../poll.js';
import { TimelineView } from '../timeline.js';
import { ErrorLine, go } from '../shell.js';
import { compactGridHtml } from './compact-grid.js';

const HOURS = [1, 3, 12, 24];

/** The device cell an event happened in, if any. */
function cellOf(target: EventTarget | null): HTMLElement | undefined {
  const cell = target instanceof Element ? target.closest<HTMLElement>('.cell') : null;
  return cell ?? undefined;
}

export function ClusterPage() {
  const [hours, setHours] = useState(3);
  const { data, error } = usePoll(
    () => getJson<ClusterResponse>(`/dash/cluster?hours=${hours}`),
    3000,
    `cluster-${hours}`,
  );
  if (!data) return <ErrorLine error={error} loading />;
  const devices = data.nodes.flatMap((n) => n.devices);
  const count = (use: string) => devices.filter((d) => d.use === use).length;
  const types = [...new Set(data.nodes.flatMap((n) => n.gpu_types))];
  // Devices the verdicts across ranks marked: slow (placed last) or drained (not placed).
  const marked = data.nodes.flatMap((n) =>
    n.devices.flatMap((d) => (d.mark ? [{ node: n.name, index: d.index, kind: d.mark.kind }] : [])),
  );
  // The timeline's order, so that a device, its band and its legend entry share one colour.
  const jobColor = jobColorMap(data.timeline.ids);
  const compact = devices.length > 64;
  const describe = (n: ClusterNode, d: ClusterNode['devices'][number]): string => {
    const holder = d.job ? data.holders[d.job] : undefined;
    const what = holder
      ? `${holder.name} (${d.job}, ${holder.user}, ${holder.state})`
      : d.use === 'other'
        ? "another user's job"
        : d.use;
    return `${n.name} ${d.kind}${d.index} ${d.name}: ${what}${d.mark ? `; ${d.mark.kind}: ${d.mark.reason}` : ''}`;
  };
  const titleOf = (cell: HTMLElement): string => {
    const [ni, di] = (cell.dataset.at ?? '').split(':').map(Number);
    const n = data.nodes[ni!];
    const d = n?.devices[di!];
    return n && d ? describe(n, d) : '';
  };
  return (
    <div class="page">
      <ErrorLine error={error} />
      <div class="summary">
        <span>
          <b>{devices.length}</b> devices on <b>{data.nodes.length}</b> node(s)
          {types.length > 1 ? (
            <>
              , <b>{types.length}</b> GPU types ({types.join(', ')})
            </>
          ) : null}
        </span>
        <span class="legend free">free {count('free')}</span>
        <span class="legend job">jobs {count('job')}</span>
        <span class="legend other">other users' jobs {count('other')}</span>
        <span class="legend foreign">foreign {count('foreign')}</span>
        {marked.length > 0 && (
          <span class="legend marked" id="marks">
            marked {marked.map((m) => `${m.node}/${m.index} ${m.kind}`).join(', ')}
          </span>
        )}
      </div>
      <div
        class={`nodes ${compact ? 'compact' : devices.length <= 16 ? 'wide' : ''}`}
        id="cluster-grid"
        // One listener for every cell: at thousands of devices, a handler and a title per cell
        // cost more to create than the cells themselves; a compact cell's title is written when
        // hovered.
        onMouseOver={(e) => {
          const cell = cellOf(e.target);
          if (cell && compact) cell.title = titleOf(cell);
        }}
        onClick={(e) => {
          const job = cellOf(e.target)?.dataset.job;
          if (job) go(`/job/${job}`);
        }}
        {...(compact ? { dangerouslySetInnerHTML: { __html: compactGridHtml(data.nodes, jobColor) } } : {})}
      >
        {compact
          ? null
          : data.nodes.map((n) => (
              <div class="node" key={n.name}>
                <div class="node-name">
                  {n.name} <span class="muted node-types">{n.gpu_types.join(' + ')}</span>
                </div>
                <div class="cells">
                  {n.devices.map((d) => {
                    const holder = d.job ? data.holders[d.job] : undefined;
                    return (
                      <div
                        key={d.index}
                        class={`cell ${d.use}${d.mark ? ` mark-${d.mark.kind}` : ''}`}
                        data-device={d.index}
                        data-mark={d.mark?.kind ?? ''}
                        data-job={d.job ?? ''}
                        title={describe(n, d)}
                        style={d.job ? { background: jobColor(d.job) } : undefined}
                      >
                        <span class="idx">
                          {d.index}
                          {d.mark ? ` ${d.mark.kind}` : ''}
                        </span>
                        {holder && <span class="holder">{holder.name}</span>}
                      </div>
                    );
                  })}
                </div>
              </div>
            ))}
      </div>
      <h3>
        Allocation timeline, last{' '}
        <select value={hours} onChange={(e) => setHours(Number((e.target as HTMLSelectElement).value))}>
          {HOURS.map((h) => (
            <option value={h}>{h} h</option>
          ))}
        </select>
      </h3>
      <TimelineView timeline={data.timeline} onOpen={(id) => go(`/job/${id}`)} />
      <div class="job-legend" id="timeline-legend">
        {data.timeline.labels.map((label, j) =>
          data.timeline.ids[j] ? (
            <a key={data.timeline.ids[j]} href={`#/job/${data.timeline.ids[j]}`}>
              <span class="swatch" style={{ background: jobColor(data.timeline.ids[j]!) }} /> {label}
            </a>
          ) : (
            <span key="other">
              <span class="swatch" style={{ background: jobColor('') }} /> other users' jobs
            </span>
          ),
        )}
      </div>
    </div>
  );
}
