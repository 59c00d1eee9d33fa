// Loads the v2 samples-op hooks (functions or "module/path#exportName" strings) and runs them with their contract checked.
// Loading refuses async or missing hooks at server start; a failing hook at run time becomes a 422 naming both hooks.
import * as path from "node:path";
import { Sample } from "../../wire/sample";
import { SessionHttpError } from "../types";
import { defaultPostprocess } from "./default-postprocess";
import { dropRetries } from "./drop-retries";
import type { HookSpec, SampleHookContext, SamplePicker, SamplePostprocessor } from "./hook-types";
import type { V2SessionMetadata } from "./tree-metadata";

/** Which of the two hooks is being loaded or run (used in messages). */
export type SampleHookKind = "picker" | "postprocessor";

/** A loaded hook and the name it is reported under. */
export interface LoadedHook<F> {
  fn: F;
  /** The spec string, the function's name, or `<anonymous picker>`. */
  name: string;
}

/** The two hooks of one server. */
export interface LoadedSampleHooks {
  picker: LoadedHook<SamplePicker>;
  postprocessor: LoadedHook<SamplePostprocessor>;
}

/**
 * Resolves both hooks, defaulting to {@link dropRetries} and {@link defaultPostprocess}.
 * @throws Error with a clear message when a hook is async, not a function, or cannot be found.
 */
export function loadSampleHooks(options: { samplePicker?: HookSpec<SamplePicker>; samplePostprocessor?: HookSpec<SamplePostprocessor> }): LoadedSampleHooks {
  return {
    picker: loadSampleHook(options.samplePicker ?? dropRetries, "picker"),
    postprocessor: loadSampleHook(options.samplePostprocessor ?? defaultPostprocess, "postprocessor"),
  };
}

/**
 * Resolves one hook. A string is `"module/path#exportName"`: the module path is tried relative to
 * `process.cwd()` first, then as a package name; without `#exportName` the module's default export (or
 * the module itself when it is a function) is used.
 * @throws Error naming the hook when it cannot be loaded, is not a function, or is async.
 */
export function loadSampleHook<F extends SamplePicker | SamplePostprocessor>(spec: HookSpec<F>, kind: SampleHookKind): LoadedHook<F> {
  if (typeof spec === "function") {
    refuseAsync(spec, kind, spec.name || `<anonymous ${kind}>`);
    return { fn: spec, name: spec.name || `<anonymous ${kind}>` };
  }
  if (typeof spec !== "string" || spec.trim() === "") {
    throw new Error(`sample ${kind} hook must be a function or a "module/path#exportName" string, got ${describe(spec)}`);
  }
  const hash = spec.lastIndexOf("#");
  const modulePath = hash === -1 ? spec : spec.slice(0, hash);
  const exportName = hash === -1 ? null : spec.slice(hash + 1);
  if (modulePath === "" || exportName === "") {
    throw new Error(`sample ${kind} hook ${JSON.stringify(spec)} is malformed: expected "module/path#exportName"`);
  }
  const loaded = requireFromCwd(modulePath, kind, spec);
  let candidate: unknown;
  if (exportName !== null) {
    if (loaded === null || (typeof loaded !== "object" && typeof loaded !== "function") || !Object.prototype.hasOwnProperty.call(loaded, exportName)) {
      throw new Error(`sample ${kind} hook ${JSON.stringify(spec)}: module ${JSON.stringify(modulePath)} has no export ${JSON.stringify(exportName)}`);
    }
    candidate = (loaded as Record<string, unknown>)[exportName];
  } else {
    const fallback = loaded !== null && typeof loaded === "object" ? (loaded as Record<string, unknown>).default : undefined;
    candidate = typeof fallback === "function" ? fallback : loaded;
  }
  if (typeof candidate !== "function") {
    throw new Error(`sample ${kind} hook ${JSON.stringify(spec)} is not a function (found ${describe(candidate)})`);
  }
  refuseAsync(candidate, kind, spec);
  return { fn: candidate as F, name: spec };
}

/**
 * Runs picker then post-processor over the raw leaf samples, checking that the picker returned a
 * duplicate-free subset of its input and that both returned arrays of Samples synchronously. `complete` (default:
 * none) turns the picked samples into the ones the post-processor gets (the stand-ins of deferred leaves
 * written out); it runs between the two hooks, outside them.
 * @throws SessionHttpError(422, text/plain) whose message names both hooks and the cause.
 */
export function runSampleHooks(
  material: Sample[],
  sessionMetadata: V2SessionMetadata,
  hooks: LoadedSampleHooks,
  context: SampleHookContext,
  complete?: (picked: readonly Sample[]) => Sample[],
): Sample[] {
  const picked = asHookFailure(hooks, () => {
    const chosen = expectSamples(hooks.picker.fn([...material], sessionMetadata, context), "picker");
    const allowed = new Set(material);
    const seen = new Set<Sample>();
    for (const sample of chosen) {
      // One cause for a foreign sample and a duplicate alike: Python's text (v2/core.py, SessionCoreV2.collect_samples).
      if (!allowed.has(sample) || seen.has(sample)) {
        throw new Error("pick hook must return a subset of its input samples without duplicates (pure selection)");
      }
      seen.add(sample);
    }
    return chosen;
  });
  const finished = complete === undefined ? picked : complete(picked);
  return asHookFailure(hooks, () => expectSamples(hooks.postprocessor.fn(finished, sessionMetadata, context), "postprocessor"));
}

/** `run()`, any error it throws turned into the 422 naming both hooks. */
function asHookFailure<T>(hooks: LoadedSampleHooks, run: () => T): T {
  try {
    return run();
  } catch (error) {
    const cause = error instanceof Error ? error.message : String(error);
    throw new SessionHttpError(422, `session sample hook failed (picker=${hooks.picker.name}, postprocessor=${hooks.postprocessor.name}): ${cause}`, true);
  }
}

function expectSamples(result: unknown, kind: SampleHookKind): Sample[] {
  if (result !== null && typeof result === "object" && typeof (result as { then?: unknown }).then === "function") {
    throw new Error(`the ${kind} returned a Promise; hooks must be synchronous`);
  }
  if (!Array.isArray(result)) throw new Error(`the ${kind} must return an array of samples, got ${describe(result)}`);
  result.forEach((item, i) => {
    if (!(item instanceof Sample)) throw new Error(`the ${kind} returned a non-Sample at index ${i} (${describe(item)})`);
  });
  return result as Sample[];
}

function requireFromCwd(modulePath: string, kind: SampleHookKind, spec: string): unknown {
  const cwd = process.cwd();
  let resolved: string | undefined;
  for (const attempt of [() => require.resolve(path.resolve(cwd, modulePath)), () => require.resolve(modulePath, { paths: [cwd] })]) {
    try {
      resolved = attempt();
      break;
    } catch {
      // try the next way of resolving
    }
  }
  if (resolved === undefined) {
    throw new Error(
      `sample ${kind} hook ${JSON.stringify(spec)}: cannot find module ${JSON.stringify(modulePath)} (looked relative to the working directory and as a package)`,
    );
  }
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a user hook module, found at run time by path
    return require(resolved) as unknown;
  } catch (error) {
    throw new Error(
      `sample ${kind} hook ${JSON.stringify(spec)}: loading ${JSON.stringify(modulePath)} failed: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
}

function refuseAsync(fn: unknown, kind: SampleHookKind, name: string): void {
  const tag = Object.prototype.toString.call(fn);
  if (tag === "[object AsyncFunction]" || tag === "[object AsyncGeneratorFunction]" || tag === "[object GeneratorFunction]") {
    throw new Error(`sample ${kind} hook ${JSON.stringify(name)} is async (or a generator); hooks must be synchronous functions`);
  }
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value;
}
