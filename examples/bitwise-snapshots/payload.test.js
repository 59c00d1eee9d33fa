// A training payload pinned as a bit tree: a change to one bit of a token, a log-prob or the reward fails with the
// leaf. `npm test` runs with --ci, so the committed snapshot must match; `npx jest -u` rewrites it on purpose.
const { Sample } = require("jest-session-parity");

test("the payload is pinned bit for bit", () => {
  const sample = new Sample({ tokens: [151644, 872, 198], response_length: 2, loss_mask: [1, 1], rollout_log_probs: [-0.25, -0], reward: 1 });
  expect({ samples: [sample], note: "float64 bits, so -0 and 0 differ" }).toMatchBitwiseSnapshot("payload");
});
