// Public surface of the wire component: the Sample model, tensors and the samples-op codec.
// Each module of the component adds its exports here.
export * from "./tensor";
export * from "./sample";
export * from "./errors";
export * from "./safetensors";
export * from "./samples-codec";
export {
  PyFloat,
  PyBigInt,
  PY_KEY_ORDER,
  pyObjectKeys,
  toPlainJs,
  dumpsPy,
  PY_RESPONSE_JSON,
  PY_DEFAULT_JSON,
  PY_SAMPLES_META_JSON,
  PY_TOJSON,
  PyJsonError,
  PyJsonWriteError,
  parsePyJson as parsePythonJson,
  type PyJson,
  type PyDumpsOptions,
  type PyJsonParseOptions,
} from "./py-json";
export * from "./json-depth";
