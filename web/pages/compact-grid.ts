/**
 * The cluster grid of a large cluster (over 64 devices: 13 px cells with no text) as one HTML
 * string. At 16,384 devices, building the grid through the virtual DOM took most of the page's
 * first render; the browser parses the same elements from markup several times faster. The
 * markup has the same classes and data attributes as the small grid's, and the page handles its
 * events by delegation (cluster.tsx).
 */
import type { ClusterNode } from '../../src/dashboard/types.js';

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** `text` safe inside an element or a quoted attribute. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

/** Every node of `nodes` with its device cells; `color` gives a holding job's background. */
export function compactGridHtml(nodes: readonly ClusterNode[], color: (job: string) => string): string {
  const out: string[] = [];
  nodes.forEach((n, ni) => {
    out.push(
      `<div class="node"><div class="node-name">${escapeHtml(n.name)} <span class="muted node-types">${escapeHtml(n.gpu_types.join(' + '))}</span></div><div class="cells">`,
    );
    n.devices.forEach((d, di) => {
      const mark = d.mark ? escapeHtml(d.mark.kind) : '';
      const job = d.job ? escapeHtml(d.job) : '';
      const style = d.job ? ` style="background:${escapeHtml(color(d.job))}"` : '';
      out.push(
        `<div class="cell ${d.use}${mark ? ` mark-${mark}` : ''}" data-at="${ni}:${di}" data-device="${d.index}" data-mark="${mark}" data-job="${job}"${style}></div>`,
      );
    });
    out.push('</div></div>');
  });
  return out.join('');
}
