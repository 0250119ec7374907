/**
 * The More-Thuente line search (MINPACK-2 dcsrch/dcstep), the one L-BFGS-B uses: finds a step
 * satisfying the strong Wolfe conditions f(stp) <= f(0) + ftol stp g(0) and |g(stp)| <= gtol
 * |g(0)| within [stpmin, stpmax]. Reverse communication: construct with f(0), g(0) and the first
 * step, evaluate at `stp`, call `next(f, g)` until it returns a status other than 'eval'.
 */

export type SearchStatus = 'eval' | 'converged' | 'warning';

const XTRAPL = 1.1;
const XTRAPU = 4.0;

export class MoreThuente {
  stp: number;
  private readonly ftol: number;
  private readonly gtol: number;
  private readonly xtol: number;
  private readonly stpmin: number;
  private readonly stpmax: number;
  private brackt = false;
  private stage = 1;
  private readonly finit: number;
  private readonly ginit: number;
  private readonly gtest: number;
  private width: number;
  private width1: number;
  private stx = 0;
  private fx: number;
  private gx: number;
  private sty = 0;
  private fy: number;
  private gy: number;
  private stmin = 0;
  private stmax: number;

  constructor(f0: number, g0: number, stp: number, stpmax: number, ftol = 1e-3, gtol = 0.9, xtol = 0.1, stpmin = 0) {
    this.stp = stp;
    this.ftol = ftol;
    this.gtol = gtol;
    this.xtol = xtol;
    this.stpmin = stpmin;
    this.stpmax = stpmax;
    this.finit = f0;
    this.ginit = g0;
    this.gtest = ftol * g0;
    this.width = stpmax - stpmin;
    this.width1 = this.width / 0.5;
    this.fx = f0;
    this.gx = g0;
    this.fy = f0;
    this.gy = g0;
    this.stmax = stp + XTRAPU * stp;
  }

  /** Feeds f and the directional derivative at `stp`; updates `stp` when more work is needed. */
  next(f: number, g: number): SearchStatus {
    const ftest = this.finit + this.stp * this.gtest;
    if (this.stage === 1 && f <= ftest && g >= 0) this.stage = 2;
    let status: SearchStatus = 'eval';
    if (this.brackt && (this.stp <= this.stmin || this.stp >= this.stmax)) status = 'warning';
    if (this.brackt && this.stmax - this.stmin <= this.xtol * this.stmax) status = 'warning';
    if (this.stp === this.stpmax && f <= ftest && g <= this.gtest) status = 'warning';
    if (this.stp === this.stpmin && (f > ftest || g >= this.gtest)) status = 'warning';
    if (f <= ftest && Math.abs(g) <= this.gtol * -this.ginit) status = 'converged';
    if (status !== 'eval') return status;

    if (this.stage === 1 && f <= this.fx && f > ftest) {
      // Modified function: keeps the search in the sufficient-decrease region.
      const gt = this.gtest;
      const s = {
        stx: this.stx,
        fx: this.fx - this.stx * gt,
        dx: this.gx - gt,
        sty: this.sty,
        fy: this.fy - this.sty * gt,
        dy: this.gy - gt,
      };
      this.step(s, f - this.stp * gt, g - gt);
      this.stx = s.stx;
      this.sty = s.sty;
      this.fx = s.fx + s.stx * gt;
      this.fy = s.fy + s.sty * gt;
      this.gx = s.dx + gt;
      this.gy = s.dy + gt;
    } else {
      const s = { stx: this.stx, fx: this.fx, dx: this.gx, sty: this.sty, fy: this.fy, dy: this.gy };
      this.step(s, f, g);
      this.stx = s.stx;
      this.fx = s.fx;
      this.gx = s.dx;
      this.sty = s.sty;
      this.fy = s.fy;
      this.gy = s.dy;
    }
    if (this.brackt) {
      if (Math.abs(this.sty - this.stx) >= 0.66 * this.width1) this.stp = this.stx + 0.5 * (this.sty - this.stx);
      this.width1 = this.width;
      this.width = Math.abs(this.sty - this.stx);
      this.stmin = Math.min(this.stx, this.sty);
      this.stmax = Math.max(this.stx, this.sty);
    } else {
      this.stmin = this.stp + XTRAPL * (this.stp - this.stx);
      this.stmax = this.stp + XTRAPU * (this.stp - this.stx);
    }
    this.stp = Math.min(Math.max(this.stp, this.stpmin), this.stpmax);
    if (
      (this.brackt && (this.stp <= this.stmin || this.stp >= this.stmax)) ||
      (this.brackt && this.stmax - this.stmin <= this.xtol * this.stmax)
    ) {
      this.stp = this.stx;
    }
    return 'eval';
  }

  /** dcstep: a safeguarded cubic/quadratic step; updates the interval in `s` and `this.stp`. */
  private step(
    s: { stx: number; fx: number; dx: number; sty: number; fy: number; dy: number },
    fp: number,
    dp: number,
  ): void {
    const { stx, fx, dx, sty, fy, dy } = s;
    const stp = this.stp;
    const stpmin = this.stmin;
    const stpmax = this.stmax;
    const sgnd = dp * (dx / Math.abs(dx));
    let stpf: number;
    if (fp > fx) {
      const theta = (3 * (fx - fp)) / (stp - stx) + dx + dp;
      const sc = Math.max(Math.abs(theta), Math.abs(dx), Math.abs(dp));
      let gamma = sc * Math.sqrt((theta / sc) ** 2 - (dx / sc) * (dp / sc));
      if (stp < stx) gamma = -gamma;
      const p = gamma - dx + theta;
      const q = gamma - dx + gamma + dp;
      const r = p / q;
      const stpc = stx + r * (stp - stx);
      const stpq = stx + (dx / ((fx - fp) / (stp - stx) + dx) / 2) * (stp - stx);
      stpf = Math.abs(stpc - stx) < Math.abs(stpq - stx) ? stpc : stpc + (stpq - stpc) / 2;
      this.brackt = true;
    } else if (sgnd < 0) {
      const theta = (3 * (fx - fp)) / (stp - stx) + dx + dp;
      const sc = Math.max(Math.abs(theta), Math.abs(dx), Math.abs(dp));
      let gamma = sc * Math.sqrt((theta / sc) ** 2 - (dx / sc) * (dp / sc));
      if (stp > stx) gamma = -gamma;
      const p = gamma - dp + theta;
      const q = gamma - dp + gamma + dx;
      const r = p / q;
      const stpc = stp + r * (stx - stp);
      const stpq = stp + (dp / (dp - dx)) * (stx - stp);
      stpf = Math.abs(stpc - stp) > Math.abs(stpq - stp) ? stpc : stpq;
      this.brackt = true;
    } else if (Math.abs(dp) < Math.abs(dx)) {
      const theta = (3 * (fx - fp)) / (stp - stx) + dx + dp;
      const sc = Math.max(Math.abs(theta), Math.abs(dx), Math.abs(dp));
      let gamma = sc * Math.sqrt(Math.max(0, (theta / sc) ** 2 - (dx / sc) * (dp / sc)));
      if (stp > stx) gamma = -gamma;
      const p = gamma - dp + theta;
      const q = gamma + (dx - dp) + gamma;
      const r = p / q;
      let stpc: number;
      if (r < 0 && gamma !== 0) stpc = stp + r * (stx - stp);
      else if (stp > stx) stpc = stpmax;
      else stpc = stpmin;
      const stpq = stp + (dp / (dp - dx)) * (stx - stp);
      if (this.brackt) {
        stpf = Math.abs(stpc - stp) < Math.abs(stpq - stp) ? stpc : stpq;
        stpf = stp > stx ? Math.min(stp + 0.66 * (sty - stp), stpf) : Math.max(stp + 0.66 * (sty - stp), stpf);
      } else {
        stpf = Math.abs(stpc - stp) > Math.abs(stpq - stp) ? stpc : stpq;
        stpf = Math.max(stpmin, Math.min(stpmax, stpf));
      }
    } else if (this.brackt) {
      const theta = (3 * (fp - fy)) / (sty - stp) + dy + dp;
      const sc = Math.max(Math.abs(theta), Math.abs(dy), Math.abs(dp));
      let gamma = sc * Math.sqrt((theta / sc) ** 2 - (dy / sc) * (dp / sc));
      if (stp > sty) gamma = -gamma;
      const p = gamma - dp + theta;
      const q = gamma - dp + gamma + dy;
      const r = p / q;
      stpf = stp + r * (sty - stp);
    } else {
      stpf = stp > stx ? stpmax : stpmin;
    }
    if (fp > fx) {
      s.sty = stp;
      s.fy = fp;
      s.dy = dp;
    } else {
      if (sgnd < 0) {
        s.sty = stx;
        s.fy = fx;
        s.dy = dx;
      }
      s.stx = stp;
      s.fx = fp;
      s.dx = dp;
    }
    this.stp = stpf;
  }
}
