// Public surface of the tokenizer component: Qwen3 tokenizer, chat template and TITO rules.
// Each module of the component adds its exports here.
export * from "./types";
export * from "./chat-template";
export * from "./byte-level-decoder";
export * from "./segment-encode-cache";
export * from "./qwen3-tokenizer";
export * from "./load";
export * from "./mismatch";
export * from "./tito";
export * from "./tito-prefix-cache";
export * from "./tito-render-caches";
export * from "./rendered-ids-memo";
export * from "./sglang-tools";
export * from "./checkpoint-tokenizer";
export * from "./native-template";
export * from "./family-load";
export * from "./families";
