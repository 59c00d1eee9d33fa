// Reading a record after the one before it finds how many input ids repeat that turn's tokens: the integer check
// skips those ids and the merge skips comparing them again. Both shortcuts must leave every outcome as it was.
import fc from "fast-check";
import {
  assembleTrajectorySample,
  mergeTurnSamples,
  PathPrefixMemo,
  readRecord,
  SampleAssemblyError,
  turnSamplesFromRecords,
  type SessionRecord,
  type TrajectoryAssembly,
  type TrajectoryAssemblyOptions,
} from "../../../src/server";
import { asAssemblyError } from "../../../src/server/samples/assembly-error";
import { loadTokenizer } from "../../../src/tokenizer";
import { expectEqual } from "../../support/fast-expect";

let decode: (ids: readonly number[]) => string;
beforeAll(async () => {
  const tokenizer = await loadTokenizer();
  decode = (ids) => tokenizer.decode(ids);
});

/** The pairwise pipeline (miles/rollout/session/samples/merge.py: per-record samples, then merge_samples), each record read alone. */
function referenceAssembly(records: readonly SessionRecord[], accumulated: readonly number[] | null, options: TrajectoryAssemblyOptions): TrajectoryAssembly {
  return asAssemblyError(() => ({ sample: mergeTurnSamples(turnSamplesFromRecords(records, accumulated, options), options.decode), emptyReason: null }));
}

type Outcome = { sample: unknown } | { error: string; assemblyError: boolean };

function outcome(run: () => TrajectoryAssembly): Outcome {
  try {
    return { sample: run().sample };
  } catch (error) {
    return { error: String(error), assemblyError: error instanceof SampleAssemblyError };
  }
}

function expectSame(actual: Outcome, expected: Outcome): void {
  if ("error" in expected || "error" in actual) {
    expectEqual(actual, expected);
    return;
  }
  // The one-pass fold keeps a hole of the last prompt as a hole in the tokens where the per-record samples spread it
  // into an undefined (the encoder refuses both alike): that older difference is not what this test is about.
  const dense = (sample: unknown): unknown =>
    Object.assign(Object.create(Object.getPrototypeOf(sample) as object) as object, sample, { tokens: Array.from((sample as { tokens: unknown[] }).tokens) });
  expect(dense(actual.sample)).toBeBitwiseEqual(dense(expected.sample));
}

function record(prompt: unknown[], output: number[], k: number): SessionRecord {
  return {
    timestamp: 1000 + k,
    request_timestamp: 999 + k,
    method: "POST",
    path: "/v1/chat/completions",
    request: { input_ids: prompt },
    response: {
      choices: [
        { finish_reason: "stop", message: { role: "assistant", content: "" }, meta_info: { output_token_logprobs: output.map((id, i) => [-i / 4, id]) } },
      ],
    },
    status_code: 200,
  };
}

/** What is put at one position of a prompt (inside the repeated part, on its edge, or in the observation). */
type Edit = "float" | "nan" | "undefined" | "hole" | "negzero" | "string" | "other" | "holeInBoth" | "undefinedOverHole" | "none";

interface Plan {
  outputs: number[][];
  edits: Array<{ turn: number; at: number; edit: Edit }>;
}

/**
 * A clean trajectory (each prompt re-renders the previous tokens, then 2 observation ids; prompt 0 holds zeros so
 * `-0` can stand for an equal id), then the edits applied to the prompts.
 */
function build(plan: Plan): { records: SessionRecord[]; accumulated: number[] } {
  const prompts: unknown[][] = [];
  let prompt: number[] = [0, 5, 0, 9];
  let accumulated: number[] = [];
  plan.outputs.forEach((output) => {
    prompts.push([...prompt]);
    accumulated = [...prompt, ...output];
    prompt = [...accumulated, 198, 0];
  });
  // a hole is what `delete` leaves in an array: holed input ids are what this test feeds the reader
  const hole = (ids: unknown[], i: number): void => {
    // eslint-disable-next-line @typescript-eslint/no-array-delete
    delete ids[i];
  };
  for (const { turn, at, edit } of plan.edits) {
    const ids = prompts[turn % prompts.length];
    const i = at % ids.length;
    if (edit === "float") ids[i] = 1.5;
    else if (edit === "nan") ids[i] = Number.NaN;
    else if (edit === "undefined") ids[i] = undefined;
    else if (edit === "hole") hole(ids, i);
    else if (edit === "negzero") ids[i] = (ids[i] as number) === 0 ? -0 : ids[i];
    else if (edit === "string") ids[i] = String(ids[i]);
    else if (edit === "other") ids[i] = (ids[i] as number) + 1;
    else if (edit === "holeInBoth" || edit === "undefinedOverHole") {
      // the same position holed in this prompt and, in the next, holed too or an explicit undefined (no integer id)
      hole(ids, i);
      const next = prompts[(turn % prompts.length) + 1];
      if (next !== undefined && i < next.length) {
        if (edit === "holeInBoth") hole(next, i);
        else next[i] = undefined;
      }
    }
  }
  return { records: prompts.map((ids, k) => record(ids, plan.outputs[k], k)), accumulated };
}

const plan: fc.Arbitrary<Plan> = fc.record({
  outputs: fc.array(fc.array(fc.integer({ min: 0, max: 2000 }), { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 6 }),
  edits: fc.array(
    fc.record({
      turn: fc.nat(6),
      at: fc.nat(40),
      edit: fc.constantFrom<Edit>("float", "nan", "undefined", "hole", "negzero", "string", "other", "holeInBoth", "undefinedOverHole", "none"),
    }),
    { maxLength: 2 },
  ),
});

test("same samples and errors as reading each record alone, whatever sits in the repeated ids (holes, -0, NaN, undefined, floats)", () => {
  const seen = new Set<string>();
  fc.assert(
    fc.property(plan, fc.boolean(), (p, withAccumulated) => {
      const { records, accumulated } = build(p);
      const ids = withAccumulated ? accumulated : null;
      const options: TrajectoryAssemblyOptions = { decode, maxTrimTokens: 0, maxSeqLen: null };
      const expected = outcome(() => referenceAssembly(records, ids, options));
      seen.add("error" in expected ? expected.error.replace(/record \d+|\d+/g, "#") : "sample");
      expectSame(
        outcome(() => assembleTrajectorySample(records, ids, options)),
        expected,
      );
      expectSame(
        outcome(() => assembleTrajectorySample(records, ids, { ...options, prefixMemo: new PathPrefixMemo() })),
        expected,
      );
    }),
    { numRuns: 1500, seed: 2929 },
  );
  // the property reached samples and both kinds of refusal the edits can cause
  expect(seen).toContain("sample");
  expect([...seen].some((text) => text.includes("not integer ids"))).toBe(true);
  expect([...seen].some((text) => text.includes("b.tokens must start with a.tokens"))).toBe(true);
});

test("the repeated length counts only ids equal to the previous turn's and stops at undefined ones", () => {
  const first = readRecord(record([1, 2], [3, 4], 0), 1);
  expect(first.repeated).toBeUndefined();
  expect(readRecord(record([1, 2, 3, 4, 198], [5], 1), 2, first).repeated).toEqual({ of: first, length: 4 });
  expect(readRecord(record([1, 2, 3, 9, 198], [5], 1), 2, first).repeated?.length).toBe(3);
  expect(readRecord(record([1, 2, 3], [5], 1), 2, first).repeated?.length).toBe(3);
  // a hole in the previous prompt reads undefined: the count stops there even where the next prompt is holed too
  // eslint-disable-next-line no-sparse-arrays
  const holed = readRecord(record([1, , 2] as number[], [3], 0), 1);
  // eslint-disable-next-line no-sparse-arrays
  expect(readRecord(record([1, , 2, 3, 7] as number[], [5], 1), 2, holed).repeated?.length).toBe(1);
  // and an explicit undefined there is still refused as no integer id
  expect(() => readRecord(record([1, undefined, 2, 3] as number[], [5], 1), 2, holed)).toThrow(/record 2: request.input_ids missing or not integer ids/);
});
