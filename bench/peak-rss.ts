// Peak resident set size of this process over an interval (one timed benchmark run), not since the process began.
// Linux: the kernel's high-water mark (VmHWM), reset through /proc/self/clear_refs; elsewhere: 5 ms RSS samples.
import * as fs from "node:fs";

/** Reads and restarts this process's peak RSS. */
export interface PeakRssTracker {
  /** Peak RSS in bytes since the previous call (or since the tracker was made), then starts a new interval. */
  takePeak(): number;
  /** Whether the figures are the kernel's exact high-water mark (true) or sampled every 5 ms (false). */
  readonly exact: boolean;
}

function kernelHighWaterMark(): number | null {
  try {
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(fs.readFileSync("/proc/self/status", "utf8"));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

function resetKernelHighWaterMark(): boolean {
  try {
    fs.writeFileSync("/proc/self/clear_refs", "5");
    return true;
  } catch {
    return false;
  }
}

/** A tracker whose first interval starts now. */
export function peakRssTracker(): PeakRssTracker {
  if (kernelHighWaterMark() !== null && resetKernelHighWaterMark()) {
    return {
      exact: true,
      takePeak() {
        const peak = Math.max(kernelHighWaterMark() ?? 0, process.memoryUsage.rss());
        resetKernelHighWaterMark();
        return peak;
      },
    };
  }
  let peak = process.memoryUsage.rss();
  setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 5).unref();
  return {
    exact: false,
    takePeak() {
      const result = Math.max(peak, process.memoryUsage.rss());
      peak = process.memoryUsage.rss();
      return result;
    },
  };
}
