// Public surface of the fuzz component: schedule grammar, server model, runner, replay, report formatting, matcher.
// The package root re-exports it; fast-check loads with it.
export * from "./schedule";
export * from "./grammar";
export * from "./conversation";
export * from "./plan";
export * from "./model";
export * from "./drive";
export * from "./checks";
export * from "./environment";
export * from "./runner";
export * from "./report";
