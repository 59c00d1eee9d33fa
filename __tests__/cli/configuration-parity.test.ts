// The newcomer's mixed run as real processes: `mock`, `serve v2`, then `run --backend --v2`, with each command's
// defaults, passes; a served v2 whose kwargs differ is reported first as a configuration problem naming the flag.
import { runCli, startCli, type RunningCli } from "./run-cli";

const started: RunningCli[] = [];
let mock: RunningCli;

beforeAll(async () => {
  mock = await startCli(["mock", "--port", "0"]);
  started.push(mock);
}, 60_000);

afterAll(async () => {
  for (const child of started.reverse()) await child.stop();
});

async function serveV2(extra: string[]): Promise<RunningCli> {
  const server = await startCli(["serve", "v2", "--backend", mock.url, "--port", "0", ...extra]);
  started.push(server);
  return server;
}

test("mock + serve v2 + run --backend --v2 with every default: exit 0, both sides named with the same configuration", async () => {
  const v2 = await serveV2([]);
  const result = await runCli(["run", "--batch", "1", "--backend", mock.url, "--v2", v2.url]);
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  const described = 'qwen3, family template (qwen3-append-safe.jinja), kwargs {"enable_thinking": false, "clear_thinking": false}';
  expect(result.stdout).toContain(`  v1       `);
  expect(result.stdout.split("\n").filter((line) => line.trim() === described)).toHaveLength(2);
  expect(result.stdout).not.toContain("Configuration problem");
  expect(result.stdout).toMatch(/^PASS: 1\/1 trajectory/m);
}, 120_000);

test("a served v2 with miles' own kwargs ({}): the run reports the configuration problem first, with the flag that aligns the sides, and exits 2", async () => {
  const v2 = await serveV2(["--chat-template-kwargs", "{}"]);
  const result = await runCli(["run", "--batch", "1", "--backend", mock.url, "--v2", v2.url]);
  expect(result.code).toBe(2);
  const out = result.stdout;
  expect(out).toContain('kwargs {"clear_thinking": false}');
  const problem = out.indexOf("Configuration problem: v1 and v2 render with different settings");
  expect(problem).toBeGreaterThan(0);
  // only the kwargs differ, and the problem comes before the table and before any listed difference
  expect(out).toContain('(chat-template kwargs {"enable_thinking": false, "clear_thinking": false} vs {"clear_thinking": false})');
  expect(out).not.toContain("family qwen3 vs");
  expect(out).not.toContain("template family (");
  expect(problem).toBeLessThan(out.indexOf("trajectory  parity"));
  expect(problem).toBeLessThan(out.indexOf("First failing differences"));
  expect(out).toContain("pass --chat-template-kwargs '{}' to this run (its embedded v1 server then renders as the given v2 does)");
  expect(out).toContain(`restart the v2 server with --chat-template-kwargs '{"enable_thinking": false}'`);
  expect(out).toMatch(/^ERROR: 1 of 1 trajectory differs between two differently configured sides/m);
  // the flag it names does align them
  const aligned = await runCli(["run", "--batch", "1", "--backend", mock.url, "--v2", v2.url, "--chat-template-kwargs", "{}"]);
  expect(aligned.stdout).not.toContain("Configuration problem");
  expect(aligned.code).toBe(0);
}, 180_000);
