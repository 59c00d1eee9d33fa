// The mock backend's reply writer: JSON.stringify's text, except that -0 is written -0.0 as SGLang's Python writes it.
// mirrors miles/utils/test_utils/mock_sglang_server.py, whose first output log-prob `-1 / 128 * 0` is dumped as -0.0.
import { stringifyReplyJson } from "../../src/backend/reply-json";

test("values without a negative zero are written exactly as JSON.stringify writes them", () => {
  const values: unknown[] = [
    { a: 1, b: [0, 1.5, "x\u2028y"], c: null, d: undefined, e: { f: true } },
    [undefined, () => 1, 2],
    { toJSON: () => ({ inner: 1 }) },
    "plain",
    0,
  ];
  for (const value of values) expect(stringifyReplyJson(value)).toBe(JSON.stringify(value));
});

test("-0 anywhere is written -0.0 and parses back to -0", () => {
  const reply = {
    meta_info: {
      output_token_logprobs: [
        [-0, 9707],
        [-1 / 128, 151645],
      ],
    },
    skipped: undefined,
    list: [undefined, -0],
  };
  const text = stringifyReplyJson(reply);
  expect(text).toBe('{"meta_info":{"output_token_logprobs":[[-0.0,9707],[-0.0078125,151645]]},"list":[null,-0.0]}');
  expect(Object.is((JSON.parse(text) as typeof reply).meta_info.output_token_logprobs[0][0], -0)).toBe(true);
});

test("the native form swaps each -0 for its marker only during the call: the value is left as it was", () => {
  const logprobs = [
    [-0, 9707],
    [-1 / 128, 151645],
  ];
  const reply = { meta_info: { output_token_logprobs: logprobs, nested: { z: -0 } } };
  expect(stringifyReplyJson(reply)).toBe('{"meta_info":{"output_token_logprobs":[[-0.0,9707],[-0.0078125,151645]],"nested":{"z":-0.0}}}');
  expect(Object.is(logprobs[0][0], -0)).toBe(true);
  expect(Object.is(reply.meta_info.nested.z, -0)).toBe(true);
});

test("frozen containers, toJSON and accessors holding -0 still come out as -0.0 and stay untouched", () => {
  const frozen = Object.freeze({ a: -0, list: Object.freeze([1, -0]) });
  expect(stringifyReplyJson({ frozen })).toBe('{"frozen":{"a":-0.0,"list":[1,-0.0]}}');
  expect(stringifyReplyJson({ dated: { toJSON: () => ({ x: -0 }) }, y: -0 })).toBe('{"dated":{"x":-0.0},"y":-0.0}');
  const withGetter = Object.defineProperty({ b: -0 }, "g", { get: () => -0, enumerable: true });
  expect(stringifyReplyJson(withGetter)).toBe('{"b":-0.0,"g":-0.0}');
  expect(Object.is(withGetter.b, -0)).toBe(true);
});
