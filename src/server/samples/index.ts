// Sample assembly from session records (SPEC §7.3), shared by the v1 and v2 policies.
// Pure modules: per-turn samples, max_seq_len truncation, merge, and the one-call assembly.
export * from "./assembly-error";
export * from "./turn-samples";
export * from "./truncate";
export * from "./merge";
export * from "./assemble";
export * from "./replay";
