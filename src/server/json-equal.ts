// Structural equality over JSON-like values, shared by the message matchers and the sample merge rules.
// Kept on its own so sample assembly does not depend on the history-matching module; Python's `==` semantics.
import { pyEquals } from "../wire/py-equals";

/** Structural equality with Python's `==` (see {@link pyEquals}): `1 == 1.0 == True`, key order ignored. */
export const jsonEqual: (a: unknown, b: unknown) => boolean = pyEquals;
