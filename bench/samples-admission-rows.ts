// The v2 samples op's admission check (reply sizing, metadata depth, the budget's reservation) against the op's own
// work (collectSamples + encodeSamplesChunks) on recorded weather trajectories, alternating in one process.
import { startMockBackend, weatherScript } from "../src/backend";
import { buildWeatherInputSamples } from "../src/fixture/input-samples";
import { runAgenticRetryTrajectories } from "../src/fixture/run-trajectories";
import { createPolicy, startSessionServer, type AnyTrajectoryPolicy, type PolicyContext, type SamplesRequestBody } from "../src/server";
import { assertMetadataFitsReply, SAMPLES_HEAP_SHARE, SAMPLES_REQUEST_BUDGET_SHARE, samplesReplySize } from "../src/server/samples-admission";
import { resolveSessionBudget } from "../src/server/session-budget";
import { SessionStore } from "../src/server/session-store";
import { encodeSamplesChunks } from "../src/wire/samples-codec";

const TRAJECTORIES = 64;
const ROUNDS = 21;
const SILENT = { warn: (): void => undefined };

/** One samples call of a recorded trajectory: what the op was given, and its request body as sent. */
interface Recorded {
  policy: AnyTrajectoryPolicy;
  state: unknown;
  body: SamplesRequestBody;
  bytes: Buffer;
  ctx: PolicyContext;
}

/** Runs the weather trajectories through a v2 server whose policy remembers each samples call's inputs. */
async function record(backendUrl: string): Promise<Recorded[]> {
  const recorded: Recorded[] = [];
  const inner = createPolicy("v2", { logger: SILENT });
  const policy: AnyTrajectoryPolicy = {
    ...inner,
    collectSamples(state, body, ctx) {
      // a typical agent's metadata on every call (the fixture's own calls carry none)
      const withMetadata: SamplesRequestBody = { ...body, metadata: { reward: 1.0, task_id: `weather-${recorded.length}`, turns: 9 } };
      recorded.push({ policy: inner, state, body: withMetadata, bytes: Buffer.from(JSON.stringify(withMetadata)), ctx });
      return inner.collectSamples(state, body, ctx);
    },
  };
  const server = await startSessionServer({ version: "v2", backendUrl, logger: SILENT, policy });
  try {
    const runs = await runAgenticRetryTrajectories({ version: "v2", inputSamples: buildWeatherInputSamples(TRAJECTORIES), sessionServerUrls: [server.url] });
    const failed = runs.find((run) => run.failure);
    if (failed) throw new Error(`trajectory failed: ${String(failed.failure)}`);
  } finally {
    await server.close();
  }
  return recorded;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Microseconds per item of `run` over `items`, one pass. */
function perItemUs<T>(items: readonly T[], run: (item: T) => unknown): number {
  const start = process.hrtime.bigint();
  for (const item of items) run(item);
  return Number(process.hrtime.bigint() - start) / 1000 / items.length;
}

/** Rows: the admission check's and the op's medians per call, and their ratio (goal < 2%). */
export async function samplesAdmissionRows(): Promise<string[]> {
  const backend = await startMockBackend({ process: weatherScript, latencyMs: 0 });
  let recorded: Recorded[];
  try {
    recorded = await record(backend.url);
  } finally {
    await backend.close();
  }
  // the server's store: the process-wide default budget with its heap guard, as a server without maxSessionBytes has
  const store = new SessionStore<object>(() => ({}), resolveSessionBudget({}));
  const admit = (item: Recorded): number => {
    if (item.body.metadata !== undefined) assertMetadataFitsReply(item.body.metadata, item.bytes);
    const reply = samplesReplySize(item.policy, item.state, item.bytes.length);
    store.reserve(reply.bytes, reply.what, { aloneShare: SAMPLES_REQUEST_BUDGET_SHARE, budgetBytes: reply.requestBytes, heapShare: SAMPLES_HEAP_SHARE })();
    return reply.bytes;
  };
  const op = (item: Recorded): number => {
    const result = item.policy.collectSamples(item.state, item.body, item.ctx);
    return encodeSamplesChunks(result.samples, result.sessionMetadata, { emptyReason: result.emptyReason, fields: item.policy.wireFields }).length;
  };
  const runs = { admit: [] as number[], op: [] as number[] };
  for (let round = 0; round < ROUNDS + 3; round += 1) {
    const admitUs = perItemUs(recorded, admit);
    const opUs = perItemUs(recorded, op);
    if (round < 3) continue; // the first rounds warm the JIT
    runs.admit.push(admitUs);
    runs.op.push(opUs);
  }
  const leaves = recorded.reduce((sum, item) => sum + (item.policy.samplesFootprint?.(item.state).samples ?? 0), 0) / recorded.length;
  const ratio = median(runs.admit) / median(runs.op);
  return [
    `v2 samples op admission check on ${recorded.length} recorded weather sessions (${leaves.toFixed(1)} leaves each), medians of ${ROUNDS} alternating passes: ` +
      `check ${median(runs.admit).toFixed(2)} µs, op (collectSamples + encodeSamplesChunks) ${median(runs.op).toFixed(1)} µs per call -> ` +
      `check/op ${(ratio * 100).toFixed(2)}% (goal < 2%)`,
  ];
}
