// The matchers compare float bits, not values: +0 and -0, or two NaN payloads, are different training data.
const { compareBitwise, Sample } = require("jest-session-parity");

test("toBeBitwiseEqual tells +0 from -0 in a sample", () => {
  expect(new Sample({ tokens: [1, 2], rollout_log_probs: [-0.5], reward: 0 })).toBeBitwiseEqual(
    new Sample({ tokens: [1, 2], rollout_log_probs: [-0.5], reward: 0 }),
  );
  expect(new Sample({ tokens: [1, 2], reward: 0 })).not.toBeBitwiseEqual(new Sample({ tokens: [1, 2], reward: -0 }));
  expect(compareBitwise({ log_probs: [0.5, 0] }, { log_probs: [0.5, -0] })).toHaveLength(1);
});
