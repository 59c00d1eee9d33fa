// Samples-op CPU on recorded weather trajectories (9 chat calls, two retries each): the one-pass assembly against the
// pairwise per-turn pipeline it replaced (kept in-tree as its reference), alternating in one run, and the whole op.
import { startMockBackend, weatherScript } from "../src/backend";
import { buildWeatherInputSamples } from "../src/fixture/input-samples";
import { runAgenticRetryTrajectories } from "../src/fixture/run-trajectories";
import {
  assembleTrajectorySample,
  createPolicy,
  mergeTurnSamples,
  startSessionServer,
  turnSamplesFromRecords,
  type AnyTrajectoryPolicy,
  type PolicyContext,
  type SamplesRequestBody,
  type SessionRecord,
  type SessionServerVersion,
} from "../src/server";
import { encodeSamplesChunks } from "../src/wire/samples-codec";

const TRAJECTORIES = 128;
const ROUNDS = 21;
const SILENT = { warn: (): void => undefined };

/** What one samples call of a recorded trajectory was given. */
interface Recorded {
  policy: AnyTrajectoryPolicy;
  state: unknown;
  body: SamplesRequestBody;
  ctx: PolicyContext;
}

/** Runs the weather trajectories through a server whose policy remembers each samples call's inputs. */
async function record(version: SessionServerVersion, backendUrl: string): Promise<Recorded[]> {
  const recorded: Recorded[] = [];
  const inner = createPolicy(version, { logger: SILENT });
  const policy: AnyTrajectoryPolicy = {
    ...inner,
    collectSamples(state, body, ctx) {
      recorded.push({ policy: inner, state, body, ctx });
      return inner.collectSamples(state, body, ctx);
    },
  };
  const server = await startSessionServer({ version, backendUrl, logger: SILENT, policy });
  try {
    const runs = await runAgenticRetryTrajectories({ version, inputSamples: buildWeatherInputSamples(TRAJECTORIES), sessionServerUrls: [server.url] });
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

/** Microseconds per item of `run` over `items`, one measured pass per call. */
function perItemUs<T>(items: readonly T[], run: (item: T) => unknown): number {
  const start = process.hrtime.bigint();
  for (const item of items) run(item);
  return Number(process.hrtime.bigint() - start) / 1000 / items.length;
}

function collectAndEncode(item: Recorded): number {
  const result = item.policy.collectSamples(item.state, item.body, item.ctx);
  return encodeSamplesChunks(result.samples, result.sessionMetadata, { emptyReason: result.emptyReason, fields: item.policy.wireFields }).length;
}

async function main(): Promise<void> {
  const backend = await startMockBackend({ process: weatherScript, latencyMs: 0 });
  try {
    const v1 = await record("v1", backend.url);
    const v2 = await record("v2", backend.url);
    // v1: the records and accumulated ids the assembly reads, for both assemblies.
    const inputs = v1.map((item) => {
      const view = item.policy.view(item.state, item.ctx);
      const records: SessionRecord[] = view.records;
      const accumulated = view.metadata.accumulated_token_ids as number[];
      return { records, accumulated, decode: (ids: readonly number[]) => item.ctx.tokenizer.decode(ids) };
    });
    const onePass = (input: (typeof inputs)[number]): unknown =>
      assembleTrajectorySample(input.records, input.accumulated, { decode: input.decode, maxTrimTokens: 0, maxSeqLen: null }).sample;
    const pairwise = (input: (typeof inputs)[number]): unknown =>
      mergeTurnSamples(turnSamplesFromRecords(input.records, input.accumulated, { decode: input.decode, maxTrimTokens: 0 }), input.decode);
    const runs = { onePass: [] as number[], pairwise: [] as number[], v1Op: [] as number[], v2Op: [] as number[] };
    for (let round = 0; round < ROUNDS + 3; round += 1) {
      const measured = round >= 3; // the first rounds warm the JIT
      const times = [perItemUs(inputs, onePass), perItemUs(inputs, pairwise), perItemUs(v1, collectAndEncode), perItemUs(v2, collectAndEncode)];
      if (!measured) continue;
      runs.onePass.push(times[0]);
      runs.pairwise.push(times[1]);
      runs.v1Op.push(times[2]);
      runs.v2Op.push(times[3]);
    }
    const records = inputs.reduce((sum, input) => sum + input.records.length, 0) / inputs.length;
    console.log(
      `v1 assembly of ${inputs.length} recorded trajectories (${records.toFixed(1)} records each): one-pass ${median(runs.onePass).toFixed(1)} µs, ` +
        `pairwise reference ${median(runs.pairwise).toFixed(1)} µs per trajectory -> one-pass/pairwise ${(median(runs.onePass) / median(runs.pairwise)).toFixed(2)}x`,
    );
    console.log(
      `whole samples op (collectSamples + encodeSamplesChunks), medians of ${ROUNDS} passes: v1 ${median(runs.v1Op).toFixed(1)} µs, ` +
        `v2 ${median(runs.v2Op).toFixed(1)} µs per trajectory`,
    );
  } finally {
    await backend.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
