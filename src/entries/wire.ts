// The `jest-session-parity/wire` entry: the training-sample model and the bytes the samples op puts on the wire.
// Pure data code (no I/O): Sample and Tensor, the samples codec and the safetensors reader and writer.
export {
  Sample,
  SpecInfo,
  PrefixCacheInfo,
  SAMPLE_FIELDS,
  SAMPLE_STATUSES,
  type JsonObject,
  type JsonValue,
  type SampleDict,
  type SampleField,
  type SampleInit,
  type SampleStatus,
  type DecodeFn,
} from "../wire/sample";
export { pyFloat, pyInt, PyFloat, PyBigInt } from "../wire/py-json-values";
export { Tensor, DTYPE_BYTES, isDtype, type Dtype, type DtypeArrayMap, type TensorData } from "../wire/tensor";
export {
  encodeSamples,
  encodeSamplesChunks,
  decodeSamplesReply,
  assertInputSampleDefaults,
  EMPTY_REASONS,
  WIRE_TENSOR_FIELDS,
  WIRE_FIELDS_V1,
  WIRE_FIELDS_V2,
  SAMPLES_META_TENSOR,
  type EmptyReason,
  type EncodeSamplesOptions,
  type DecodeSamplesOptions,
  type SampleCheckResult,
  type SamplesReply,
  type WireJsonField,
  type WireTensorField,
} from "../wire/samples-codec";
export { readSafetensors, writeSafetensors, SAFETENSORS_METADATA_KEY, type SafetensorsContents, type ReadSafetensorsOptions } from "../wire/safetensors";
export { DEFAULT_SAMPLES_DECODE_LIMITS, DecodeWork, type SamplesDecodeLimits } from "../wire/decode-limits";
export { SafetensorsFormatError, SamplesCodecError, InputSampleDefaultsError } from "../wire/errors";
