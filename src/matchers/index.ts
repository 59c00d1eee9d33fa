// Public surface of the matchers component; the package root re-exports it.
// Importing it also brings the matcher typings (module "expect" and the global jest namespace) into scope.
export * from "./bitwise";
export * from "./format-differences";
export * from "./training-metadata-projection";
export * from "./to-be-bitwise-equal";
export * from "./bitwise-equal-to";
export * from "./registry";
export type { SessionParityMatchers, SessionParityAsymmetricMatchers } from "./typings";
