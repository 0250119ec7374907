import type { TaskProgress } from '../../sim/parallel.js';

/** Where progress goes: stderr, or anything with its shape (tests). */
export interface ProgressSink {
  readonly isTTY?: boolean;
  write(text: string): unknown;
}

/**
 * Progress of a long command on stderr. On a terminal: a one-line bar redrawn in place. Piped or
 * redirected (not a TTY): a plain line every `plain_every_ms` (default 5 s, so a quick run
 * prints none) and a last line when done, so logs show that it is alive without control
 * characters. Progress of a task is the mean of (simulated time / last arrival) and (completed
 * jobs / jobs).
 */
export class ProgressBar {
  private readonly fractions: number[];
  private lastDraw = 0;
  private readonly started_ms: number;
  private lastPlain_ms: number;
  private printedPlain = false;

  constructor(
    private readonly label: string,
    tasks: number,
    private readonly out: ProgressSink = process.stderr,
    private readonly now_ms: () => number = Date.now,
    private readonly plain_every_ms = 5000,
  ) {
    this.fractions = new Array<number>(tasks).fill(0);
    this.started_ms = now_ms();
    this.lastPlain_ms = this.started_ms;
  }

  update(p: TaskProgress): void {
    const timeShare = p.last_arrival_s > 0 ? Math.min(1, p.now_s / p.last_arrival_s) : 1;
    this.fractions[p.index] = p.done ? 1 : (timeShare + p.completed / Math.max(1, p.total)) / 2;
    const now = this.now_ms();
    const f = this.fractions.reduce((s, x) => s + x, 0) / this.fractions.length;
    const done = this.fractions.filter((x) => x >= 1).length;
    const detail =
      this.fractions.length > 1
        ? `${done}/${this.fractions.length} runs`
        : `t=${Math.round(p.now_s / 60)} min, ${p.completed}/${p.total} jobs`;
    if (this.out.isTTY !== true) {
      if (now - this.lastPlain_ms < this.plain_every_ms) return;
      this.lastPlain_ms = now;
      this.printedPlain = true;
      this.out.write(
        `${this.label}: ${(100 * f).toFixed(0)}% (${detail}) after ${Math.round((now - this.started_ms) / 1000)} s\n`,
      );
      return;
    }
    if (now - this.lastDraw < 100 && !p.done) return;
    this.lastDraw = now;
    const width = 30;
    const filled = Math.round(f * width);
    this.out.write(
      `\r${this.label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(100 * f).toFixed(0).padStart(3)}% ${detail}\u001b[K`,
    );
  }

  finish(): void {
    if (this.out.isTTY === true) this.out.write('\r\u001b[K');
    else if (this.printedPlain)
      this.out.write(`${this.label}: done after ${Math.round((this.now_ms() - this.started_ms) / 1000)} s\n`);
  }
}
