/** One row of `goodput usage`. */
export interface UsageRow {
  user: string;
  team: string;
  gpu_type: string;
  device_hours: number;
}
