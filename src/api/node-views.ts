/**
 * What `GET /v1/nodes` answers: every node of the inventory with its devices, each device's
 * holder as `principal` may see it and its mark. The dashboard's cluster route calls it in the
 * same process (not over HTTP: at 16,384 devices the JSON both ways cost more than building it).
 */
import { deviceType } from '../backends/device-type.js';
import type { Controller } from '../control/controller.js';
import type { DeviceMark } from '../control/ranks/device-mark.js';
import { PLACED_STATES } from '../store/lifecycle.js';
import type { Store } from '../store/store.js';
import type { JobRecord } from '../store/types.js';
import { mayAccess, type Principal } from './auth.js';
import type { DeviceView, NodeView } from './views.js';

/** The controller's part node views need. */
export type NodeSource = Pick<Controller, 'inventory' | 'deviceMarks'>;

/**
 * The node views `principal` (a user) sees: other users' job ids are left out, not their use.
 * `placed`: the jobs in PLACED_STATES when the caller has read them already (the dashboard's
 * cluster route reads them among the jobs it draws); read here when absent.
 */
export async function nodeViews(
  store: Store,
  controller: NodeSource,
  principal: Principal,
  placed?: readonly JobRecord[],
): Promise<NodeView[]> {
  const [jobs, live] = await Promise.all([
    placed ?? store.listJobs({ states: PLACED_STATES }),
    store.listLiveReplicas(),
  ]);
  const inventory = controller.inventory();
  const holder = new Map<string, string>();
  for (const j of jobs) j.devices.forEach((d, i) => holder.set(`${inventory[j.allocation[i]!]?.name}/${d}`, j.id));
  // A device is held until the process on it is gone, even when its job has ended.
  for (const r of live) if (r.device !== null) holder.set(`${r.node}/${r.device}`, r.job_id);
  const owner = new Map(jobs.map((j) => [j.id, j.user]));
  for (const id of new Set(holder.values())) if (!owner.has(id)) owner.set(id, (await store.getJob(id))?.user ?? '');
  // Other users' job ids are theirs to share: a non-admin sees only that a device is taken.
  const shown = (id: string | undefined) => (id !== undefined && mayAccess(principal, owner.get(id)!, id) ? id : null);
  const marks = new Map(controller.deviceMarks().map((m) => [`${m.node}/${m.device}`, m]));
  return inventory.map((n) => ({
    name: n.name,
    usable: n.usable,
    note: n.note,
    gpu_types: [...new Set(n.devices.map(deviceType))],
    devices: n.devices.map((d) => {
      const id = holder.get(`${n.name}/${d.index}`);
      return {
        index: d.index,
        kind: d.kind,
        name: d.name,
        type: deviceType(d),
        job: shown(id),
        busy: id !== undefined,
        ...markOf(marks.get(`${n.name}/${d.index}`)),
      };
    }),
  }));
}

/** A device's mark from the verdicts across ranks, as DeviceView carries it (nothing when unmarked). */
function markOf(m: DeviceMark | undefined): Pick<DeviceView, 'mark'> {
  return m ? { mark: { kind: m.kind, reason: m.reason } } : {};
}
