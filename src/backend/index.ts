// Public surface of the backend component: the SGLang-compatible mock built from msw handlers.
// Each module of the component adds its exports here.
export * from "./types";
