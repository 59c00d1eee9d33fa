// Checks the options object of the comparator and the matchers: a plain object with only the known keys, each of
// the right type, so a misspelt option is refused by name instead of silently ignored.
import { BitwiseUsageError, type BitwiseOptions } from "./bitwise-types";

const OPTION_KEYS: readonly string[] = ["maxDifferences", "metadataProjection", "rootPath"] satisfies ReadonlyArray<keyof BitwiseOptions>;

/**
 * Checks a {@link BitwiseOptions} object as the comparator and the matchers receive it: a plain object holding
 * only `maxDifferences` (non-negative integer or Infinity), `metadataProjection` (function) and `rootPath`
 * (non-empty string). A misspelt key is refused by name rather than silently ignored.
 * @throws BitwiseUsageError naming the offending option
 */
export function assertBitwiseOptions(options: unknown): asserts options is BitwiseOptions {
  checkOptions(options as BitwiseOptions);
}

export function checkOptions(options: BitwiseOptions): void {
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw new BitwiseUsageError(
      "",
      `bitwise options must be an object, got ${options === null ? "null" : Array.isArray(options) ? "an array" : typeof options}`,
    );
  }
  const unknown = Object.keys(options).filter((key) => !OPTION_KEYS.includes(key));
  if (unknown.length > 0) {
    throw new BitwiseUsageError(
      "",
      `unknown bitwise option${unknown.length > 1 ? "s" : ""} ${unknown.map((key) => JSON.stringify(key)).join(", ")}; known options: ${OPTION_KEYS.join(", ")}`,
    );
  }
  const { maxDifferences, metadataProjection, rootPath: root } = options;
  if (maxDifferences !== undefined && !(maxDifferences === Infinity || (Number.isInteger(maxDifferences) && maxDifferences >= 0))) {
    throw new BitwiseUsageError("", `option maxDifferences must be a non-negative integer or Infinity, got ${String(maxDifferences)}`);
  }
  if (metadataProjection !== undefined && typeof metadataProjection !== "function") {
    throw new BitwiseUsageError("", `option metadataProjection must be a function, got ${typeof metadataProjection}`);
  }
  if (root !== undefined && (typeof root !== "string" || root === "")) {
    throw new BitwiseUsageError("", "option rootPath must be a non-empty string");
  }
}
