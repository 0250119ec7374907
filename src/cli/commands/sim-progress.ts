import type { TaskProgress } from '../../sim/parallel.js';

/**
 * A one-line progress bar on stderr, drawn only when stderr is a TTY. Progress of a task is the
 * mean of (simulated time / last arrival) and (completed jobs / jobs).
 */
export class ProgressBar {
  private readonly fractions: number[];
  private readonly enabled: boolean;
  private lastDraw = 0;

  constructor(
    private readonly label: string,
    tasks: number,
  ) {
    this.fractions = new Array<number>(tasks).fill(0);
    this.enabled = process.stderr.isTTY === true;
  }

  update(p: TaskProgress): void {
    if (!this.enabled) return;
    const timeShare = p.last_arrival_s > 0 ? Math.min(1, p.now_s / p.last_arrival_s) : 1;
    this.fractions[p.index] = p.done ? 1 : (timeShare + p.completed / Math.max(1, p.total)) / 2;
    const now = Date.now();
    if (now - this.lastDraw < 100 && !p.done) return;
    this.lastDraw = now;
    const f = this.fractions.reduce((s, x) => s + x, 0) / this.fractions.length;
    const width = 30;
    const filled = Math.round(f * width);
    const done = this.fractions.filter((x) => x >= 1).length;
    const detail = this.fractions.length > 1 ? `${done}/${this.fractions.length} runs` : `t=${Math.round(p.now_s / 60)} min, ${p.completed}/${p.total} jobs`;
    process.stderr.write(`\r${this.label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(100 * f).toFixed(0).padStart(3)}% ${detail}\u001b[K`);
  }

  finish(): void {
    if (this.enabled) process.stderr.write('\r\u001b[K');
  }
}
