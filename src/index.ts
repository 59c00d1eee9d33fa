// The package's public API: everything a test file imports from "jest-session-parity".
// Each component keeps its own barrel; this file only gathers them.
export * from "./wire";
export * from "./matchers";
export * from "./tokenizer";
export * from "./backend";
export * from "./server";
export * from "./agent";
export * from "./fixture";
export * from "./snapshot";
export * from "./fuzz";
