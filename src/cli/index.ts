// Programmatic surface of the CLI component (the `session-parity` binary is main.ts).
// Exported so other tools can embed or extend the command set.
export { buildProgram } from "./main";
export * from "./serve-command";
