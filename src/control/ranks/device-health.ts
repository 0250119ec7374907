/**
 * Devices whose ranks straggled or hung, fed back to placement: a device whose ranks straggled
 * in `slow_after` different jobs (or attempts) is marked `slow` and placed last on its node, so a
 * gang takes it only when no equal device is free (and its node comes after equal unmarked nodes:
 * control/loop/typed-nodes.ts, mark-preference.ts); a device whose rank hung is `drained` at once
 * (Goodput holds it no more) until an admin clears it (`goodput nodes clear NODE[/DEVICE]`).
 * In memory (a restart clears the marks; the events keep what happened). The inventory the
 * scheduler sees is the backend's, adjusted by `healthAdjusted` (pure).
 */
import type { Backend, BackendNode } from '../../backends/backend.js';
import type { DeviceMark } from './device-mark.js';

export type { DeviceMark };

interface Tally {
  straggled: Set<string>;
  hung: Set<string>;
  mark?: DeviceMark;
}

export class DeviceHealth {
  private readonly tallies = new Map<string, Tally>();

  constructor(private readonly slow_after = 2) {}

  private tally(node: string, device: number): Tally {
    const key = `${node}/${device}`;
    let t = this.tallies.get(key);
    if (!t) this.tallies.set(key, (t = { straggled: new Set(), hung: new Set() }));
    return t;
  }

  /**
   * Counts a straggler verdict (`who`: job and attempt, counted once); answers the mark when this
   * verdict makes the device `slow`, else undefined.
   */
  straggled(node: string, device: number, who: string, now_ms: number): DeviceMark | undefined {
    const t = this.tally(node, device);
    if (t.straggled.has(who)) return undefined;
    t.straggled.add(who);
    if (t.mark || t.straggled.size < this.slow_after) return undefined;
    t.mark = {
      node,
      device,
      kind: 'slow',
      stragglers: t.straggled.size,
      hangs: t.hung.size,
      since_ms: now_ms,
      reason: `its ranks straggled in ${t.straggled.size} jobs`,
    };
    return t.mark;
  }

  /** Counts a hang verdict and drains the device; answers its mark. */
  hung(node: string, device: number, who: string, now_ms: number): DeviceMark {
    const t = this.tally(node, device);
    t.hung.add(who);
    t.mark = {
      node,
      device,
      kind: 'drained',
      stragglers: t.straggled.size,
      hangs: t.hung.size,
      since_ms: now_ms,
      reason: `its rank hung (${who})`,
    };
    return t.mark;
  }

  /** Clears the marks and counts of a node's devices (all, or `device`); answers the cleared marks. */
  clear(node: string, device?: number): DeviceMark[] {
    const out: DeviceMark[] = [];
    for (const [key, t] of this.tallies) {
      const [n, d] = [key.slice(0, key.lastIndexOf('/')), Number(key.slice(key.lastIndexOf('/') + 1))];
      if (n !== node || (device !== undefined && d !== device)) continue;
      if (t.mark) out.push(t.mark);
      this.tallies.delete(key);
    }
    return out;
  }

  marks(): DeviceMark[] {
    return [...this.tallies.values()].flatMap((t) => (t.mark ? [t.mark] : []));
  }
}

/**
 * The inventory as placement should see it: on each node its healthy usable devices first, then
 * the slow ones, then the rest (drained, or held by other work); `usable` less the drained ones.
 * A device binding takes free devices in this order, so a slow device is taken only when no
 * healthy one is free. Pure.
 */
export function healthAdjusted(nodes: readonly BackendNode[], marks: readonly DeviceMark[]): BackendNode[] {
  if (marks.length === 0) return [...nodes];
  return nodes.map((n) => {
    const mine = new Map(marks.filter((m) => m.node === n.name).map((m) => [m.device, m]));
    if (mine.size === 0) return n;
    const usable = n.devices.slice(0, n.usable);
    const ok = usable.filter((d) => !mine.has(d.index));
    const slow = usable.filter((d) => mine.get(d.index)?.kind === 'slow');
    const drained = usable.filter((d) => mine.get(d.index)?.kind === 'drained');
    const notes = [...mine.values()].map((m) => `device ${m.device} ${m.kind} (${m.reason})`);
    return {
      ...n,
      devices: [...ok, ...slow, ...drained, ...n.devices.slice(n.usable)],
      usable: ok.length + slow.length,
      note: [n.note, ...notes].filter((s) => s !== '').join('; '),
    };
  });
}

/** The backend with its inventory adjusted by `health` (every other call passes through). */
export function withDeviceHealth(backend: Backend, health: DeviceHealth): Backend {
  const nodes = () => healthAdjusted(backend.nodes(), health.marks());
  // A proxy, not a copy: the backend's methods run on the backend itself (its own state, `this`).
  return new Proxy(backend, {
    get(target, prop) {
      if (prop === 'nodes') return nodes;
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
