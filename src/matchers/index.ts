// Public surface of the matchers component; the package root re-exports it.
// Importing it also brings the matcher typings (module "expect" and the global jest namespace) into scope.
export * from "./bitwise";
export * from "./format-differences";
export * from "./training-metadata-projection";
export * from "./to-be-bitwise-equal";
export * from "./bitwise-equal-to";
export * from "./parity-verdict";
export * from "./weather-expectations";
export * from "./weather-schedule-expectations";
export * from "./retry-topology";
export * from "./agent-metadata";
export * from "./tool-call-round-trip";
export * from "./training-payload-parity";
export * from "./sample-invariants";
export * from "./parity-matchers";
export * from "./session-verify-gate";
export * from "./session-verify-gate-matcher";
export type { SessionParityMatchers, SessionParityAsymmetricMatchers, SessionParityAsymmetricMatcher } from "./typings";
