// The run's progress bar: silent off a TTY, redrawn in place (throttled) on one, erased before the report.
// Uses a fake stream and clock; the spawned-CLI tests check that a piped stderr stays empty.
import { ProgressBar, type ProgressStream } from "../../src/cli/progress-bar";

function fakeStream(isTTY: boolean): ProgressStream & { chunks: string[] } {
  const chunks: string[] = [];
  return { isTTY, columns: 60, chunks, write: (chunk: string) => chunks.push(chunk) };
}

test("writes nothing when the stream is not a TTY", () => {
  const stream = fakeStream(false);
  const bar = new ProgressBar(stream, { total: 4, label: "trajectories" });
  for (let i = 0; i < 4; i++) bar.tick();
  bar.finish();
  expect(bar.active).toBe(false);
  expect(stream.chunks).toEqual([]);
});

test("on a TTY it draws the counter, throttles redraws, always draws completion and erases itself", () => {
  const stream = fakeStream(true);
  let now = 0;
  const bar = new ProgressBar(stream, { total: 4, label: "trajectories", intervalMs: 100, now: () => now });
  expect(stream.chunks).toEqual([`\r\x1b[2K[${"-".repeat(20)}] 0/4 trajectories  0.0 s`]);
  now = 50;
  bar.tick();
  expect(stream.chunks).toHaveLength(1); // throttled
  now = 150;
  bar.tick(false);
  expect(stream.chunks[1]).toBe(`\r\x1b[2K[${"#".repeat(10)}${"-".repeat(10)}] 2/4 trajectories, 1 failed  0.1 s`);
  now = 160;
  bar.tick();
  bar.tick();
  expect(stream.chunks.at(-1)).toBe(`\r\x1b[2K[${"#".repeat(20)}] 4/4 trajectories, 1 failed  0.2 s`);
  bar.finish();
  bar.finish();
  expect(stream.chunks.at(-1)).toBe("\r\x1b[2K");
  expect(stream.chunks.filter((chunk) => chunk === "\r\x1b[2K")).toHaveLength(1);
});
