// Public surface of the TITO family registry: the shared family shape, the registered families and the lookup.
// The loader that turns a family plus a checkpoint into a tokenizer and TITO rules is in ../family-load.ts.
export * from "./types";
export * from "./registry";
export { DEFAULT_FAMILY } from "./default";
export { QWEN3_FAMILY } from "./qwen3";
export { QWENNEXT_FAMILY } from "./qwennext";
export { GLM47_FAMILY } from "./glm47";
export { GLM53_FAMILY } from "./glm53";
export { NEMOTRON3_FAMILY } from "./nemotron3";
export { QWEN35_FAMILY } from "./qwen35";
export { DEEPSEEKV32_FAMILY } from "./deepseekv32";
export { DEEPSEEKV4_FAMILY } from "./deepseekv4";
export { KIMI25_FAMILY } from "./kimi25";
export { KIMI26_FAMILY } from "./kimi26";
export { MINIMAX_M25_FAMILY } from "./minimax-m25";
export { MINIMAX_M27_FAMILY } from "./minimax-m27";
export { INKLING_FAMILY, INKLING_MODEL_TYPES } from "./inkling";
