/**
 * A profile is per (key, GPU type): its replica counts must not mix GPU types, or the stored
 * points would describe neither type (the slower GPU paces every synchronous step).
 */
import type { DeviceInfo } from '../../backends/backend.js';
import { deviceType } from '../../backends/device-type.js';
import { usageError } from '../../core/errors.js';

/**
 * `devices` when they are of one type. Of several types: chosen by the user (`chosen`), a usage
 * error naming each type's GPUs; on 'auto', the GPUs of the type with the most of them (the first
 * listed on a tie), with a note through `note` naming how to profile the others.
 */
export function devicesOfOneType(
  devices: readonly DeviceInfo[],
  chosen: boolean,
  note: (line: string) => void,
): DeviceInfo[] {
  const byType = new Map<string, DeviceInfo[]>();
  for (const d of devices) byType.set(deviceType(d), [...(byType.get(deviceType(d)) ?? []), d]);
  if (byType.size <= 1) return [...devices];
  const groups = [...byType.entries()];
  const listing = (list: readonly DeviceInfo[]) =>
    `--gpus ${list.map((d) => d.index).join(',')}${list.length === 1 ? ',' : ''}`;
  const named = groups.map(([type, list]) => `${type} (${listing(list)})`).join(', ');
  if (chosen) {
    throw usageError(
      `profile: the GPUs chosen are of ${groups.length} types: ${named}. A profile is per GPU ` +
        `type, and a step across types runs at the slower GPU's pace: profile each type on its own`,
    );
  }
  const [type, list] = groups.reduce((best, g) => (g[1].length > best[1].length ? g : best));
  const others = groups
    .filter(([t]) => t !== type)
    .map(([t, l]) => `${t} with ${listing(l)}`)
    .join(', ');
  note(
    `this machine has GPUs of ${groups.length} types: profiling the ${list.length} ${type}; profile the others in another run: ${others}`,
  );
  return list;
}
