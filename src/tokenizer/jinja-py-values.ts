// Hands Python-typed data to @huggingface/jinja as the values Jinja2 would hold: an integral float (a tool-call
// argument `1.0`) stays a float, so `{{ x }}` and `tojson` print `1.0`; object keys keep Python's order.
import { Environment } from "@huggingface/jinja";
import { PyBigInt, PyFloat, pyObjectKeys } from "../wire/py-json";

/** A runtime value of the engine, built by {@link toJinjaValue}; the engine's own classes are not exported. */
type RuntimeValue = ReturnType<Environment["set"]>;
type RuntimeClass = new (value: unknown) => RuntimeValue;

/** The engine's runtime value classes, read off values it converts itself (probed once). */
const CLASSES = (() => {
  const probe = new Environment();
  const of = (name: string, value: unknown): RuntimeClass => probe.set(name, value).constructor as RuntimeClass;
  return {
    float: of("f", 0.5),
    integer: of("i", 1),
    string: of("s", ""),
    boolean: of("b", true),
    none: of("n", null),
    array: of("a", []),
    object: of("o", {}),
  };
})();

/** A context entry already converted: the engine declares it as is instead of converting it again. */
class PreparedValue {
  constructor(readonly runtime: RuntimeValue) {}
}

/** Key under which an integer runtime value carries the Python int it was made from when that is beyond 2^53. */
export const EXACT_INTEGER = Symbol("jest-session-parity.exact-integer");

const INSTALLED = Symbol.for("jest-session-parity.jinja-prepared-values");

/**
 * Teaches `Environment.set` (what `Template.render` declares each context entry with) to accept a
 * {@link PreparedValue}; every other value goes through the engine's own conversion unchanged. Installed once.
 */
function install(): void {
  const proto = Environment.prototype as Environment & { [INSTALLED]?: true };
  if (proto[INSTALLED] === true) return;
  const original = Object.getOwnPropertyDescriptor(Environment.prototype, "set")?.value as (this: Environment, name: string, value: unknown) => RuntimeValue;
  proto.set = function set(this: Environment, name: string, value: unknown): RuntimeValue {
    if (!(value instanceof PreparedValue)) return original.call(this, name, value);
    // what `declareVariable` (private in the typings) does: a context entry is declared once
    if (this.variables.has(name)) throw new SyntaxError(`Variable already declared: ${name}`);
    this.variables.set(name, value.runtime);
    return value.runtime;
  };
  proto[INSTALLED] = true;
}

function convert(value: unknown): RuntimeValue {
  if (value instanceof PyFloat) return new CLASSES.float(value.value);
  if (value instanceof PyBigInt) {
    // the engine's integers are JS numbers: the exact Python int rides along for tojson (Python spells it as written)
    const runtime = new CLASSES.integer(Number(value.value));
    (runtime as unknown as Record<symbol, PyBigInt>)[EXACT_INTEGER] = value;
    return runtime;
  }
  if (value === null) return new CLASSES.none(null);
  if (Array.isArray(value)) return new CLASSES.array(value.map(convert));
  switch (typeof value) {
    case "number":
      return Number.isInteger(value) && !Object.is(value, -0) ? new CLASSES.integer(value) : new CLASSES.float(value);
    case "string":
      return new CLASSES.string(value);
    case "boolean":
      return new CLASSES.boolean(value);
    case "object": {
      const record = value as Record<string, unknown>;
      // a key holding undefined is absent, as in the JSON the Python side reads
      const keys = pyObjectKeys(record).filter((key) => record[key] !== undefined);
      return new CLASSES.object(new Map(keys.map((key) => [key, convert(record[key])])));
    }
    default:
      throw new TypeError(`cannot hand a ${typeof value} to the chat template`);
  }
}

/**
 * `value` (JSON data as the package's Python-typed reader gives it: {@link PyFloat}, {@link PyBigInt}, remembered
 * key order) as a context entry for `Template.render`, holding what Jinja2 would hold.
 */
export function toJinjaValue(value: unknown): unknown {
  install();
  return new PreparedValue(convert(value));
}
