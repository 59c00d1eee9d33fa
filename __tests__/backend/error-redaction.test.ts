// The mock backend's error bodies go through the same path redaction as the session server's: the session server
// re-emits backend replies to its client, so a tokenizer directory or a script's stack frame must not travel in them.
import path from "node:path";
import { errorReply } from "../../src/backend/errors";

test("an error message naming an absolute path carries only the file name", () => {
  const reply = errorReply(500, `mock backend could not load its tokenizer: ENOENT: no such file, open '${path.join(__dirname, "models", "tokenizer.json")}'`);
  expect(JSON.parse(reply.text)).toEqual({
    object: "error",
    message: "mock backend could not load its tokenizer: ENOENT: no such file, open 'tokenizer.json'",
    type: "InternalServerError",
    param: null,
    code: 500,
  });
  expect(reply.text).not.toContain(__dirname);
});

test("routes in a message are kept", () => {
  expect(JSON.parse(errorReply(404, "no route for GET /v1/models/x").text).message).toBe("no route for GET /v1/models/x");
});
