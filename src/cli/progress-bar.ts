// A one-line progress bar for the trajectories of a run, redrawn in place on an interactive stderr.
// On anything but a TTY it stays silent, so logs and pipes only ever get the final report.

/** The part of a stream the bar writes to (process.stderr fits). */
export interface ProgressStream {
  /** True only for an interactive terminal; the bar draws nothing otherwise. */
  isTTY?: boolean;
  /** Terminal width in columns, when known. */
  columns?: number;
  /** Writes text as is. */
  write(chunk: string): unknown;
}

/** Options of {@link ProgressBar}. */
export interface ProgressBarOptions {
  /** Units of work in total. */
  total: number;
  /** Word after the counter, e.g. "trajectories". */
  label: string;
  /** Minimum milliseconds between redraws (default 100). */
  intervalMs?: number;
  /** Clock, for tests (default performance.now). */
  now?: () => number;
}

/** Counts finished units and redraws `[#####-----] 12/32 trajectories  1.4 s` on a TTY. */
export class ProgressBar {
  private done = 0;
  private failed = 0;
  private lastDraw = -Infinity;
  private readonly started: number;
  private readonly now: () => number;
  private readonly enabled: boolean;
  private finished = false;

  /** Draws the empty bar immediately when `stream` is a TTY. */
  constructor(
    private readonly stream: ProgressStream,
    private readonly options: ProgressBarOptions,
  ) {
    this.now = options.now ?? (() => performance.now());
    this.started = this.now();
    this.enabled = stream.isTTY === true;
    this.draw(true);
  }

  /** True when the bar writes anything. */
  get active(): boolean {
    return this.enabled;
  }

  /** Marks one unit finished (`ok = false` counts it as failed). */
  tick(ok = true): void {
    this.done += 1;
    if (!ok) this.failed += 1;
    this.draw(this.done === this.options.total);
  }

  /** Erases the bar so the report starts on a clean line. Idempotent. */
  finish(): void {
    if (this.finished) return;
    this.finished = true;
    if (this.enabled) this.stream.write("\r\x1b[2K");
  }

  /** The line the bar shows now (without carriage return). */
  render(width = this.stream.columns || 80): string {
    const { total, label } = this.options;
    const seconds = ((this.now() - this.started) / 1000).toFixed(1);
    const tail = ` ${this.done}/${total} ${label}${this.failed > 0 ? `, ${this.failed} failed` : ""}  ${seconds} s`;
    // A fixed allowance for the counter keeps the bar's width steady while the counter grows.
    const barWidth = Math.max(10, Math.min(40, width - 40));
    const filled = total === 0 ? barWidth : Math.round((this.done / total) * barWidth);
    return `[${"#".repeat(filled)}${"-".repeat(barWidth - filled)}]${tail}`;
  }

  private draw(force: boolean): void {
    if (!this.enabled || this.finished) return;
    const at = this.now();
    if (!force && at - this.lastDraw < (this.options.intervalMs ?? 100)) return;
    this.lastDraw = at;
    this.stream.write(`\r\x1b[2K${this.render()}`);
  }
}
