// Public surface of the chat-template verifier: the checks, the trajectory pool, the plan loader and the one-call API.
// verifyTemplate is what `session-parity verify-template` runs; the pure parts work on any TemplateVerifyPlan.
export * from "./types";
export * from "./trajectories";
export * from "./cases";
export * from "./divergence";
export * from "./checks";
export * from "./verify-template";
export * from "./load-plan";
export * from "./verify-template-api";
