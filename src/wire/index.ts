// Public surface of the wire component: the Sample model, tensors and the samples-op codec.
// Each module of the component adds its exports here.
export * from "./tensor";
export * from "./sample";
export * from "./errors";
export * from "./safetensors";
export * from "./samples-codec";
export * from "./json-depth";
export { DEFAULT_SAMPLES_DECODE_LIMITS, DecodeWork } from "./decode-limits";
