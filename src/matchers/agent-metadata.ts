// Judges a run's agent metadata: v2's `sessionMetadata.agent` equals the expectation, and every sample carries each key.
// Pure: a verdict naming the failing key and sample, with bitwise differences.
import { isBitwiseEqual } from "./bitwise";
import { DEFAULT_PART_DIFFERENCES, VerdictBuilder, type ParityVerdict } from "./parity-verdict";
import { isPlainRecord, readRun, sampleLabel } from "./run-shapes";

/** Options of {@link checkAgentMetadata}. */
export interface AgentMetadataOptions {
  /** Differences kept per failing part (default 10). */
  maxDifferences?: number;
  /**
   * `true`: v2's `sessionMetadata.agent` only has to hold each expected key (extra keys allowed). Default `false`:
   * it must equal `expected` exactly. Sample metadata is always matched as a subset (it carries the server's keys too).
   */
  subset?: boolean;
}

/**
 * Checks a run against the expected agent metadata (e.g. `WEATHER_AGENT_METADATA`): on a v2 run
 * `sessionMetadata.agent` must be bitwise equal to `expected` (no key more or less; with `subset: true` it only has to
 * hold each expected key); on any run every sample's
 * metadata must hold each expected key with a bitwise-equal value. A run without samples fails.
 * @throws TypeError when `expected` is not a plain object.
 */
export function checkAgentMetadata(received: unknown, expected: Readonly<Record<string, unknown>>, options: AgentMetadataOptions = {}): ParityVerdict {
  if (!isPlainRecord(expected)) throw new TypeError("toMatchAgentMetadata: expected must be a plain object of agent metadata keys");
  const builder = new VerdictBuilder(options.maxDifferences ?? DEFAULT_PART_DIFFERENCES);
  const read = readRun(received, "received");
  if ("problem" in read) {
    builder.usage("run", read.problem);
    return builder.verdict();
  }
  const { run } = read;
  if (run.version === "v2") {
    const agent = run.sessionMetadata.agent;
    if (agent === undefined)
      builder.fail("sessionMetadata.agent", "the v2 session metadata has no `agent` key (was the agent metadata sent with the collect?)");
    else if (options.subset === true && isPlainRecord(agent)) {
      const held: Record<string, unknown> = {};
      for (const key of Object.keys(expected)) if (Object.prototype.hasOwnProperty.call(agent, key)) held[key] = agent[key];
      builder.compare("sessionMetadata.agent", "v2 sessionMetadata.agent lacks or differs in expected keys (subset match)", held, expected, {
        rootPath: "sessionMetadata.agent",
        integers: true,
      });
    } else
      builder.compare("sessionMetadata.agent", "v2 sessionMetadata.agent differs from the expected agent metadata", agent, expected, {
        rootPath: "sessionMetadata.agent",
        integers: true,
      });
  }
  if (run.samples.length === 0) builder.fail("samples", `the ${run.version} run has no sample to carry the agent metadata`);
  run.samples.forEach((sample, i) => {
    const part = `samples[${i}].metadata`;
    const keys = Object.keys(expected);
    const held: Record<string, unknown> = {};
    for (const key of keys) if (Object.prototype.hasOwnProperty.call(sample.metadata, key)) held[key] = sample.metadata[key];
    const differing = keys.filter((key) => !(key in held) || !isBitwiseEqual(held[key], expected[key]));
    if (differing.length === 0) {
      builder.passed(part);
      return;
    }
    builder.compare(
      part,
      `${sampleLabel(sample, i)} of the ${run.version} run: metadata ${differing.length === 1 ? "key" : "keys"} ${differing.map((key) => JSON.stringify(key)).join(", ")} ${differing.length === 1 ? "differs" : "differ"} from the expected agent metadata`,
      held,
      expected,
      { rootPath: part, integers: true },
    );
  });
  return builder.verdict();
}
