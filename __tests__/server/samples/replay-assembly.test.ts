// Routing replay in the samples assembly, record by record: full R3, additional-R3 patches, indexer top-k, and
// every refusal with the original's text. Fixtures follow the Python samples-op tests (arange buffers, 2 layers x top-2).
import { applyAdditionR3, assembleTrajectorySample, decodeTopkBuffer, SampleAssemblyError, type SessionRecord } from "../../../src/server";
import { loadTokenizer } from "../../../src/tokenizer";
import { Sample } from "../../../src/wire/sample";
import { Tensor } from "../../../src/wire/tensor";

const NUM_LAYERS = 2;
const TOPK = 2;
const ROW = NUM_LAYERS * TOPK;
const ACCUMULATED = [1, 2, 3, 10, 11, 20, 21, 30, 31];

let decode: (ids: readonly number[]) => string;
beforeAll(async () => {
  const tokenizer = await loadTokenizer();
  decode = (ids) => tokenizer.decode(ids);
});

function arange(from: number, to: number): Int32Array {
  return Int32Array.from({ length: to - from }, (_, i) => from + i);
}

function b64(values: Int32Array): string {
  return Buffer.from(values.buffer, values.byteOffset, values.byteLength).toString("base64");
}

/** Rows [start, end) of the stream `seed, seed + 1, ...` laid out (rows, NUM_LAYERS, TOPK). */
function rowsB64(seed: number, start: number, end: number): string {
  return b64(arange(seed + start * ROW, seed + end * ROW));
}

function expected(seed: number, rows: number): Tensor<"I32"> {
  return new Tensor("I32", [rows, NUM_LAYERS, TOPK], arange(seed, seed + rows * ROW));
}

function record(prompt: number[], output: number[], meta: Record<string, unknown> = {}, request: Record<string, unknown> = {}, finish = "stop"): SessionRecord {
  return {
    timestamp: 1000 + prompt.length,
    request_timestamp: 999 + prompt.length,
    method: "POST",
    path: "/v1/chat/completions",
    request: { input_ids: prompt, ...request },
    response: {
      choices: [
        {
          finish_reason: finish,
          message: { role: "assistant", content: "" },
          meta_info: { output_token_logprobs: output.map((id, i) => [-(i + 1) / 8, id]), ...meta },
        },
      ],
    },
    status_code: 200,
  };
}

/** The two-turn trajectory with full R3 buffers (turn 1: 4 rows of seed 0; turn 2: 8 rows of seed 100). */
function fullRecords(): SessionRecord[] {
  return [
    record([1, 2, 3], [10, 11], { routed_experts: rowsB64(0, 0, 4) }),
    record([1, 2, 3, 10, 11, 20, 21], [30, 31], { routed_experts: rowsB64(100, 0, 8) }),
  ];
}

/** The same trajectory with additional-R3 patches of the seed-100 stream: turn 1 rows [0, 4), turn 2 rows [start2, 8). */
function additionRecords(start2 = 4): SessionRecord[] {
  return [
    record([1, 2, 3], [10, 11], { routed_experts: rowsB64(100, 0, 4) }, { routed_experts_start_len: 0 }),
    record([1, 2, 3, 10, 11, 20, 21], [30, 31], { routed_experts: rowsB64(100, start2, 8) }, { routed_experts_start_len: start2 }),
  ];
}

function assemble(records: SessionRecord[], options: { additionR3?: boolean; maxSeqLen?: number | null; numLayers?: number | null } = {}): Sample {
  const { sample } = assembleTrajectorySample(records, ACCUMULATED, {
    decode,
    maxTrimTokens: 0,
    maxSeqLen: options.maxSeqLen ?? null,
    replay: { numLayers: options.numLayers === undefined ? NUM_LAYERS : options.numLayers, additionR3: options.additionR3 ?? false },
  });
  if (sample === null) throw new Error("no sample");
  return sample;
}

function failure(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(SampleAssemblyError);
    return (error as Error).message;
  }
  throw new Error("expected a SampleAssemblyError");
}

describe("full R3", () => {
  // mirrors tests/fast/router/test_session_samples_op.py::test_assembled_sample_golden
  test("the last turn's routed experts become the sample's, shape (len(tokens) - 1, layers, k)", () => {
    const sample = assemble(fullRecords());
    expect(sample.tokens).toEqual(ACCUMULATED);
    expect(sample.rollout_routed_experts).toBeBitwiseEqual(expected(100, 8));
  });

  // mirrors tests/fast/router/test_session_samples_op.py::test_truncation_golden
  test("max_seq_len trims the tensor with the tokens", () => {
    const sample = assemble(fullRecords(), { maxSeqLen: 8 });
    expect(sample.status).toBe("truncated");
    expect(sample.rollout_routed_experts).toBeBitwiseEqual(expected(100, 8).sliceRows(7));
  });

  // mirrors miles/rollout/generate_utils/sample_utils.py::merge_samples (_introduces_replay_gap)
  test("a turn without routed experts ends the fold at the last fully captured turn", () => {
    const records = fullRecords();
    delete (records[1].response.choices as { meta_info: Record<string, unknown> }[])[0].meta_info.routed_experts;
    const sample = assemble(records);
    expect(sample.tokens).toEqual([1, 2, 3, 10, 11]);
    expect(sample.rollout_routed_experts).toBeBitwiseEqual(expected(0, 4));
  });

  // mirrors miles/rollout/generate_utils/generate_endpoint_utils.py::_decode_topk_buffer (numpy reshape refusal)
  test("a buffer that does not divide into (rows, num_layers, k) is refused with numpy's text", () => {
    const records = fullRecords();
    (records[1].response.choices as { meta_info: Record<string, unknown> }[])[0].meta_info.routed_experts = b64(arange(0, 10));
    expect(failure(() => assemble(records))).toBe("cannot reshape array of size 10 into shape (8,2,0)");
    expect(failure(() => decodeTopkBuffer(b64(arange(0, 10)), 3, 2, "routed_experts"))).toBe("cannot reshape array of size 10 into shape (3,2,1)");
  });

  test("k is recovered from the length; zero rows give an empty (0, layers, 0) tensor", () => {
    expect(decodeTopkBuffer(b64(arange(0, 24)), 3, 2, "x").shape).toEqual([3, 2, 4]);
    expect(decodeTopkBuffer("", 0, 2, "x").shape).toEqual([0, 2, 0]);
  });

  test("a payload that is not base64 text, or records without num_layers configured, are refused by name", () => {
    expect(failure(() => decodeTopkBuffer("abc", 1, 1, "routed_experts"))).toBe("routed_experts is not valid base64 (Incorrect padding or characters)");
    expect(failure(() => decodeTopkBuffer(42, 1, 1, "routed_experts"))).toBe("routed_experts must be a base64 string, got number");
    expect(failure(() => assemble(fullRecords(), { numLayers: null }))).toBe(
      "record 1: routed_experts present but the session server has no num_layers (start it with numLayers / --num-layers)",
    );
  });

  test("the decoded tensor reads the decoded bytes in place (no copy between base64 decode and the tensor)", () => {
    const tensor = decodeTopkBuffer(rowsB64(0, 0, 4096), 4096, NUM_LAYERS, "x");
    expect(tensor.data.byteOffset % 4).toBe(0);
    expect(tensor.data.buffer.byteLength).toBe(4096 * ROW * 4);
  });
});

describe("additional R3", () => {
  // mirrors tests/fast/router/test_session_samples_op.py::test_addition_assembled_sample_matches_full_reference
  test("patches rebuild byte for byte the tensor full R3 carries", () => {
    const sample = assemble(additionRecords(), { additionR3: true });
    expect(sample.loss_mask).toEqual([1, 1, 0, 0, 1, 1]);
    expect(sample.rollout_routed_experts).toBeBitwiseEqual(expected(100, 8));
  });

  // mirrors tests/fast/router/test_session_samples_op.py::test_addition_truncation_golden
  test("max_seq_len: the tensor is materialized for exactly len(tokens) - 1 rows", () => {
    const sample = assemble(additionRecords(), { additionR3: true, maxSeqLen: 8 });
    expect(sample.tokens).toEqual(ACCUMULATED.slice(0, 8));
    expect(sample.rollout_routed_experts).toBeBitwiseEqual(expected(100, 7));
  });

  // mirrors tests/fast/router/test_session_samples_op.py::test_addition_turn_boundary_truncation_uses_required_prefix
  test("a max_seq_len boundary that drops the last turn keeps only the first patch's rows", () => {
    const sample = assemble(additionRecords(), { additionR3: true, maxSeqLen: 5 });
    expect(sample.tokens).toEqual(ACCUMULATED.slice(0, 5));
    expect(sample.rollout_routed_experts).toBeBitwiseEqual(expected(100, 4));
  });

  // mirrors tests/fast/rollout/session/test_samples.py::test_replay_disabled_records_unaffected
  test("records without any payload leave the sample without routed experts", () => {
    const records = additionRecords().map((r) => {
      delete (r.response.choices as { meta_info: Record<string, unknown> }[])[0].meta_info.routed_experts;
      return r;
    });
    expect(assemble(records, { additionR3: true }).rollout_routed_experts).toBeNull();
  });

  // mirrors tests/fast/router/test_session_samples_op.py::test_addition_gap_returns_422
  test("a patch that starts at the wrong row is refused", () => {
    expect(failure(() => assemble(additionRecords(5), { additionR3: true }))).toBe("additional R3: record 1 starts at row 5; expected 4");
    expect(failure(() => assemble(additionRecords(3), { additionR3: true }))).toBe("additional R3: record 1 starts at row 3; expected 4");
  });

  // mirrors miles/rollout/session/samples/merge.py::merge_samples_with_addition_r3 (missing start offset)
  test("a record whose request carries no routed_experts_start_len is refused", () => {
    const records = additionRecords();
    delete records[1].request.routed_experts_start_len;
    expect(failure(() => assemble(records, { additionR3: true }))).toBe("additional R3: record 1 request carries no routed_experts_start_len");
  });

  // mirrors miles/rollout/session/samples/merge.py::merge_samples_with_addition_r3 (record without payload)
  test("a record without a payload among records with one is refused", () => {
    const records = additionRecords();
    delete (records[1].response.choices as { meta_info: Record<string, unknown> }[])[0].meta_info.routed_experts;
    expect(failure(() => assemble(records, { additionR3: true }))).toBe("additional R3: record 1 has no routed_experts payload");
  });

  // mirrors miles/rollout/session/samples/merge.py::merge_samples_with_addition_r3 (payload presence vs rows)
  test("an empty payload for a patch that has rows is refused", () => {
    const records = additionRecords();
    (records[1].response.choices as { meta_info: Record<string, unknown> }[])[0].meta_info.routed_experts = "";
    expect(failure(() => assemble(records, { additionR3: true }))).toBe("additional R3: record 1 payload presence does not match 4 rows");
  });

  // mirrors miles/rollout/session/samples/merge.py::merge_samples_with_addition_r3 (offsets past the record's end)
  test("a start beyond the record's own rows is refused as invalid offsets", () => {
    const records = [record([], [], { routed_experts: "" }, { routed_experts_start_len: 0 })];
    const merged = new Sample({ tokens: [1, 10, 11], response_length: 2 });
    expect(failure(() => applyAdditionR3(merged, records, { numLayers: NUM_LAYERS, additionR3: true }))).toBe(
      "additional R3: record 0 has invalid offsets (start=0, end=-1)",
    );
  });

  // mirrors miles/rollout/session/samples/merge.py::merge_samples_with_addition_r3 (rows must cover the sample)
  test("patches that do not cover len(tokens) - 1 rows are refused", () => {
    const merged = new Sample({ tokens: [...ACCUMULATED, 40, 41], response_length: 8 });
    expect(failure(() => applyAdditionR3(merged, additionRecords(), { numLayers: NUM_LAYERS, additionR3: true }))).toBe(
      "additional R3 covers 8 rows but the merged sample needs 10 (len(tokens) - 1)",
    );
  });

  test("patches whose top-k differ cannot be concatenated (numpy's text)", () => {
    const records = additionRecords();
    (records[1].response.choices as { meta_info: Record<string, unknown> }[])[0].meta_info.routed_experts = b64(arange(0, 4 * NUM_LAYERS * 1));
    expect(failure(() => assemble(records, { additionR3: true }))).toBe(
      "all the input array dimensions except for the concatenation axis must match exactly, but along dimension 2, the array at index 0 has size 2 and the array at index 1 has size 1",
    );
  });
});

describe("indexer top-k", () => {
  // mirrors tests/fast/rollout/generate_utils/test_sample_utils.py::test_merge_preserves_indexer_topk_from_final_sample
  test("the final turn's indexer top-k, its layer count from meta_info, is kept", () => {
    const records = fullRecords();
    (records[0].response.choices as { meta_info: Record<string, unknown> }[])[0].meta_info.indexer_topk = b64(arange(0, 4 * 3 * 5));
    (records[0].response.choices as { meta_info: Record<string, unknown> }[])[0].meta_info.indexer_topk_num_layers = 3;
    (records[1].response.choices as { meta_info: Record<string, unknown> }[])[0].meta_info.indexer_topk = b64(arange(7, 7 + 8 * 3 * 5));
    (records[1].response.choices as { meta_info: Record<string, unknown> }[])[0].meta_info.indexer_topk_num_layers = 3;
    const sample = assemble(records);
    expect(sample.rollout_indexer_topk).toBeBitwiseEqual(new Tensor("I32", [8, 3, 5], arange(7, 7 + 8 * 3 * 5)));
  });

  // mirrors miles/rollout/generate_utils/generate_endpoint_utils.py::get_indexer_topk_from_response (layer count assertion)
  test("indexer_topk without indexer_topk_num_layers is refused with the original's text", () => {
    const records = fullRecords();
    (records[1].response.choices as { meta_info: Record<string, unknown> }[])[0].meta_info.indexer_topk = b64(arange(0, 8));
    expect(failure(() => assemble(records))).toBe(
      "Server returned indexer_topk without indexer_topk_num_layers; sglang-miles must include the layer count in meta_info.",
    );
  });
});
