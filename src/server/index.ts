// Public surface of the server component: the reference session server (v1 linear, v2 tree) and its seams.
// Sample assembly and message matchers are exported so custom policies and tests can reuse them.
export * from "./types";
export * from "./policy";
export * from "./session-server";
export * from "./replay-options";
export * from "./replay-request";
export * from "./message-matchers";
export * from "./append-only";
export * from "./policy-factory";
export * from "./samples";
export * from "./v1";
export * from "./v2";
