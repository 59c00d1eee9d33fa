// The dumpsPy settings the py-json fast-path suites hold to the reference writer, and the splice mark they plant: one
// list, so a setting added for one suite is tried by all of them.
import { PY_DEFAULT_JSON, PY_RESPONSE_JSON, PY_SAMPLES_META_JSON, PY_TOJSON, type PyDumpsOptions } from "../../src/wire/py-json";

/** Compact and ASCII-only with NaN allowed: the one combination no server setting uses, to reach every branch. */
export const COMPACT_ASCII: PyDumpsOptions = { ensureAscii: true, compact: true, allowNan: true };
/** Every setting the servers write with, and COMPACT_ASCII. */
export const ALL_OPTIONS: readonly PyDumpsOptions[] = [PY_DEFAULT_JSON, PY_TOJSON, PY_RESPONSE_JSON, PY_SAMPLES_META_JSON, COMPACT_ASCII];
/** The text dumpsPy writes in place of each copy during its native write (a string no reply holds). */
export const SPLICE_MARK = "\u0000jest-session-parity:spelled\u0000";
