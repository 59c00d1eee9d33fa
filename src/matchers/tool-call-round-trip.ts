// Judges tool-call round trips in a session's records: advertised tools, one parsed call, and the tool reply to it.
// Pure: reads a run's `preCollect` snapshot (or a snapshot) and returns a verdict naming the failing record.
import { DEFAULT_PART_DIFFERENCES, VerdictBuilder, type ParityVerdict } from "./parity-verdict";
import { isPlainRecord, readRecords, type PlainRecord } from "./run-shapes";
import type { ToolCallRoundTrip } from "./weather-expectations";

/** Options of {@link checkToolCallRoundTrips}. */
export interface ToolCallRoundTripOptions {
  /** Tool names every record must advertise, in order (default: the distinct names of the expected round trips). */
  tools?: readonly string[];
  /** Differences kept per failing part (default 10). */
  maxDifferences?: number;
}

/**
 * Checks the records of a run's `preCollect` snapshot (or of a `GET /sessions/{id}` snapshot): every record's
 * request advertised exactly the expected tools; for each round trip, record `call`'s response holds exactly one
 * tool call, to `name`, whose JSON arguments parse to `arguments` (bitwise), and record `result`'s last request
 * message is a `tool` message answering that call's id.
 * @throws TypeError when `expected` is not an array of round trips.
 */
export function checkToolCallRoundTrips(received: unknown, expected: readonly ToolCallRoundTrip[], options: ToolCallRoundTripOptions = {}): ParityVerdict {
  checkExpected(expected);
  const builder = new VerdictBuilder(options.maxDifferences ?? DEFAULT_PART_DIFFERENCES);
  const read = readRecords(received, "received");
  if ("problem" in read) {
    builder.usage("records", read.problem);
    return builder.verdict();
  }
  const records = read.records as unknown[];
  const tools = options.tools ?? [...new Set(expected.map((trip) => trip.name))];

  records.forEach((record, i) => {
    const part = `records[${i}].request.tools`;
    const advertised = advertisedTools(record);
    if (advertised === null) builder.fail(part, `record ${i} has no request.tools array; expected the tools [${tools.join(", ")}]`);
    else
      builder.compare(
        part,
        `record ${i} advertised the tools [${advertised.map(String).join(", ")}], expected exactly [${tools.join(", ")}]`,
        advertised,
        [...tools],
        { rootPath: part },
      );
  });

  expected.forEach((trip, t) => {
    const part = `round trip ${t} (${trip.name}: record ${trip.call} -> record ${trip.result})`;
    const callRecord = records[trip.call];
    const resultRecord = records[trip.result];
    if (callRecord === undefined || resultRecord === undefined) {
      builder.fail(part, `record ${callRecord === undefined ? trip.call : trip.result} does not exist (the session has ${records.length} records)`);
      return;
    }
    const toolCalls = responseToolCalls(callRecord);
    if (toolCalls === null || toolCalls.length !== 1) {
      builder.fail(
        part,
        `record ${trip.call}'s response holds ${toolCalls === null ? "no tool_calls" : `${toolCalls.length} tool calls`}, expected exactly one call to ${trip.name}`,
      );
      return;
    }
    const [call] = toolCalls;
    const fn = isPlainRecord(call) && isPlainRecord(call.function) ? call.function : {};
    if (fn.name !== trip.name) {
      builder.fail(part, `record ${trip.call} called ${JSON.stringify(fn.name)}, expected ${JSON.stringify(trip.name)}`);
      return;
    }
    const parsed = parseArguments(fn.arguments);
    if ("problem" in parsed) {
      builder.fail(part, `record ${trip.call}'s ${trip.name} arguments ${parsed.problem}`);
      return;
    }
    const argsPath = `records[${trip.call}].response.choices[0].message.tool_calls[0].function.arguments`;
    if (
      !builder.compare(part, `record ${trip.call}'s ${trip.name} arguments differ from the expected ones`, parsed.value, trip.arguments, {
        rootPath: argsPath,
        integers: true,
      })
    )
      return;
    const callId = isPlainRecord(call) ? call.id : undefined;
    const answer = lastRequestMessage(resultRecord);
    if (answer === null || answer.role !== "tool") {
      builder.fail(
        part,
        `record ${trip.result}'s last request message is ${answer === null ? "absent" : `a ${JSON.stringify(answer.role)} message`}, expected the tool result of call ${JSON.stringify(callId)}`,
      );
      return;
    }
    builder.compare(
      part,
      `record ${trip.result}'s tool message answers ${JSON.stringify(answer.tool_call_id)}, expected the call id ${JSON.stringify(callId)} of record ${trip.call}`,
      answer.tool_call_id,
      callId,
      { rootPath: `records[${trip.result}].request.messages[-1].tool_call_id` },
    );
  });
  return builder.verdict();
}

function checkExpected(expected: readonly ToolCallRoundTrip[]): void {
  if (!Array.isArray(expected)) throw new TypeError("toRoundTripToolCalls: expected must be an array of {call, result, name, arguments}");
  expected.forEach((trip, i) => {
    if (
      !isPlainRecord(trip) ||
      !Number.isInteger(trip.call) ||
      !Number.isInteger(trip.result) ||
      typeof trip.name !== "string" ||
      !isPlainRecord(trip.arguments)
    ) {
      throw new TypeError(`toRoundTripToolCalls: expected[${i}] must be {call: record index, result: record index, name: string, arguments: object}`);
    }
  });
}

function advertisedTools(record: unknown): unknown[] | null {
  const request = isPlainRecord(record) ? record.request : undefined;
  const tools = isPlainRecord(request) ? request.tools : undefined;
  if (!Array.isArray(tools)) return null;
  return tools.map((tool: unknown) => {
    if (!isPlainRecord(tool)) return tool;
    return isPlainRecord(tool.function) ? tool.function.name : tool.name;
  });
}

function responseToolCalls(record: unknown): unknown[] | null {
  const response = isPlainRecord(record) ? record.response : undefined;
  const choices = isPlainRecord(response) ? response.choices : undefined;
  const first: unknown = Array.isArray(choices) ? choices[0] : undefined;
  const message = isPlainRecord(first) ? first.message : undefined;
  const calls = isPlainRecord(message) ? message.tool_calls : undefined;
  return Array.isArray(calls) ? calls : null;
}

function lastRequestMessage(record: unknown): PlainRecord | null {
  const request = isPlainRecord(record) ? record.request : undefined;
  const messages = isPlainRecord(request) ? request.messages : undefined;
  const last: unknown = Array.isArray(messages) ? messages[messages.length - 1] : undefined;
  return isPlainRecord(last) ? last : null;
}

function parseArguments(raw: unknown): { value: unknown } | { problem: string } {
  if (isPlainRecord(raw)) return { value: raw };
  if (typeof raw !== "string") return { problem: `are ${raw === undefined ? "missing" : typeof raw}, expected a JSON string` };
  try {
    return { value: JSON.parse(raw) as unknown };
  } catch (error) {
    return { problem: `are not valid JSON (${(error as Error).message}): ${JSON.stringify(raw.slice(0, 80))}` };
  }
}
