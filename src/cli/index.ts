// Programmatic surface of the CLI component (the `session-parity` binary is main.ts).
// Exported so other tools can embed or extend the command set, or run the parity proof and read its report.
export { buildProgram } from "./main";
export * from "./serve-command";
export * from "./mock-command";
export * from "./command-kit";
export * from "./server-problems";
export * from "./version-check";
export * from "./run-command";
export * from "./run-parity";
export * from "./package-version";
export * from "./run-options";
export * from "./report";
export * from "./judge";
export * from "./summary-table";
export * from "./progress-bar";
export * from "./exit-codes";
export * from "./fuzz-command";
export * from "./verify-template-command";
