// JSON in and out with Python's meaning: parse as json.loads does (int vs float, exact big ints, key order) and
// write as json.dumps does (repr floats, separators, ensure_ascii), so the servers' bytes match the Python servers'.
// The reader, the writers and the value kinds live in modules of one job each; this module gathers their public names.
export * from "./py-json-values";
export * from "./py-repr";
export * from "./py-json-read";
export * from "./py-json-dumps";
export {
  isNativeSpelledNumber,
  isNativeSpelledNumberArray,
  PY_DEFAULT_JSON,
  PY_RESPONSE_JSON,
  PY_SAMPLES_META_JSON,
  PY_TOJSON,
  PyJsonWriteError,
  SpelledPyJson,
  type PyDumpsOptions,
} from "./py-json-spelling";
