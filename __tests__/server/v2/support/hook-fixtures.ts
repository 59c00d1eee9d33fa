// Custom sample hooks loaded by "module/path#exportName" in the v2 tests (good ones and deliberately broken ones).
// Each export exercises one clause of the hook contract.
import { Sample } from "../../../../src/wire/sample";
import type { SamplePicker, SamplePostprocessor } from "../../../../src/server/v2/hook-types";

/** Keeps every leaf in input (commit) order. */
export const keepAll: SamplePicker = (samples) => [...samples];

/** Keeps every leaf in reverse order. */
export const reverseAll: SamplePicker = (samples) => [...samples].reverse();

/** Returns the first sample twice. */
export const duplicateFirst: SamplePicker = (samples) => [samples[0], samples[0]];

/** Throws. */
export const exploding: SamplePicker = () => {
  throw new Error("policy bug in the picker");
};

/** Returns a rewritten copy instead of the input object. */
export const copying: SamplePicker = (samples) => [Sample.fromDict(samples[0].toDict())];

/** An async picker: refused at server start. */
export const asyncPicker = async (samples: Sample[]): Promise<Sample[]> => samples;

/** A post-processor that returns a Promise at run time (a plain function, so it passes the start check). */
export const promisePostprocessor = ((samples: Sample[]) => Promise.resolve(samples)) as unknown as SamplePostprocessor;

/** Not a function. */
export const notAFunction = 42;

/** A post-processor that leaves samples untouched. */
export const identityPostprocess: SamplePostprocessor = (samples) => samples;

/** Throws an error whose message names this file by its absolute path (as a failing `require` or `fs` call would). */
export const explodingWithPath: SamplePicker = () => {
  throw new Error(`cannot read ${__filename}: the picker's table is missing`);
};
