// Public surface of the backend component: the SGLang-compatible mock built from msw handlers.
// Each module of the component adds its exports here.
export * from "./types";
export * from "./stats";
export * from "./python-json";
export * from "./tool-call-parser";
export * from "./replies";
export * from "./errors";
export * from "./handlers";
export * from "./http-bridge";
export * from "./mock-backend";
export * from "./stats-routes";
export * from "./in-process";
export * from "./scripts";
export * from "./routing-buffers";
export * from "./reply-plans";
export * from "./plan-routes";
