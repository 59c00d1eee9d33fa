// `session-parity run --html` looked at as a person would: a real failing run (a v2 picker that keeps superseded
// retries) and a real passing one, opened in headless Chromium. Skips, saying so, where no Chromium is installed.
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { startMockBackend, weatherScript, type MockBackend } from "../../src/backend";
import { executeRun } from "../../src/cli/run-command";
import { RUN_DEFAULTS } from "../../src/cli/run-options";
import { startSessionServer, type RunningSessionServer } from "../../src/server";
import type { SamplePicker } from "../../src/server/v2/hook-types";

jest.setTimeout(120_000);

/** Debian's Chromium, or the one named by SESSION_PARITY_CHROMIUM. */
const CHROMIUM = process.env.SESSION_PARITY_CHROMIUM ?? "/usr/bin/chromium";
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium)
  console.warn(`html-report.browser.test: SKIPPED the browser checks, no Chromium at ${CHROMIUM} (apt-get install chromium, or set SESSION_PARITY_CHROMIUM)`);
const browserTest = haveChromium ? test : test.skip;

/** The browser's `getComputedStyle`, typed here because this project's typings have no DOM. */
type StyleWindow = { getComputedStyle(element: unknown): Record<string, string> };

/** Screenshots kept for review (ignored by git). */
const SCREENSHOTS = path.resolve(__dirname, "../../.test-output");

let scratch: string;
let backend: MockBackend;
let keepAllV2: RunningSessionServer;
let failingPage: string;
let passingPage: string;
const keepRetries: SamplePicker = (samples) => [...samples];
const silentIo = { out: { write: () => true }, err: { isTTY: false, write: () => true }, env: {} };

beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), "session-parity-html-"));
  backend = await startMockBackend({ process: weatherScript, latencyMs: 0 });
  keepAllV2 = await startSessionServer({ version: "v2", backendUrl: backend.url, samplePicker: keepRetries, logger: { warn: () => undefined } });
  failingPage = path.join(scratch, "failing.html");
  passingPage = path.join(scratch, "passing.html");
  const failing = await executeRun({ ...RUN_DEFAULTS, batch: 1, latencyMs: 0, backend: backend.url, v2: keepAllV2.url, html: failingPage }, silentIo);
  expect(failing.exitCode).toBe(1);
  const passing = await executeRun({ ...RUN_DEFAULTS, batch: 3, latencyMs: 0, html: passingPage }, silentIo);
  expect(passing.exitCode).toBe(0);
});
afterAll(async () => {
  await keepAllV2?.close();
  await backend?.close();
  await rm(scratch, { recursive: true, force: true });
});

test("the failing run's page names the failing parts exactly as the terminal and marks the superseded kept leaves", async () => {
  const html = await readFile(failingPage, "utf8");
  expect(html.match(/<section class="pair /g)).toHaveLength(1);
  expect(html).toContain("[sample count] the v2 run returned 3 samples, expected 1");
  expect(html).toContain("[selected leaf] the run kept 3 samples, from leaves [4, 5, 8], expected one sample from leaf 8");
  expect(html).toContain(`<g class="node leaf superseded kept failing"><title>node 4 (superseded retry leaf, kept, failing)`);
  expect(html).toContain(`<g class="node leaf superseded kept failing"><title>node 5 (superseded retry leaf, kept, failing)`);
  expect(html).toContain(`<g class="node leaf kept"><title>node 8 (active leaf, kept)`);
  expect(html).toContain(`id="pair-0-first-diff"`);
});

test("the passing run's page has one folded section per trajectory and no difference", async () => {
  const html = await readFile(passingPage, "utf8");
  expect(html.match(/<section class="pair pass"/g)).toHaveLength(3);
  expect(html).not.toContain('first-diff"');
  expect(html).toContain("every token, mask entry and log-prob bit agrees");
});

browserTest("in Chromium: no console error, the failing leaf and first differing token are highlighted, the side panel explains it", async () => {
  const { chromium } = await import("playwright-core");
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const problems: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
    page.on("pageerror", (error) => problems.push(error.message));
    page.on("request", (request) => {
      if (!request.url().startsWith("file:")) problems.push(`network request to ${request.url()}`);
    });

    await page.goto(`file://${failingPage}`);
    expect(await page.locator("section.pair").count()).toBe(1);
    expect(await page.locator("section.pair.fail details[open]").count()).toBe(1);
    expect(await page.locator("svg.tree g.failing").count()).toBe(2);
    const failingLeafFill = await page
      .locator("svg.tree g.failing rect")
      .first()
      .evaluate((rect) => (globalThis as unknown as StyleWindow).getComputedStyle(rect).fill);
    expect(failingLeafFill).toBe("rgb(251, 217, 217)");
    const first = page.locator("#pair-0-first-diff");
    expect(await first.isVisible()).toBe(true);
    expect(await first.evaluate((el) => (globalThis as unknown as StyleWindow).getComputedStyle(el).outlineColor)).toBe("rgb(204, 0, 0)");
    await first.hover();
    const panel = await page.locator("#token-panel").innerText();
    expect(panel).toContain("position");
    expect(panel).toMatch(/differs\s+true/);
    await mkdir(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, "html-report-failing.png"), fullPage: false });

    await page.goto(`file://${passingPage}`);
    expect(await page.locator("section.pair.pass").count()).toBe(3);
    expect(await page.locator("section.pair .tok.diff").count()).toBe(0);
    await page.screenshot({ path: path.join(SCREENSHOTS, "html-report-passing.png"), fullPage: false });
    expect(problems).toEqual([]);
  } finally {
    await browser.close();
  }
});
