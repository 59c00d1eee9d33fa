// The v1 (linear) trajectory policy and its pure state helpers.
// The shell selects it for `version: "v1"`.
export * from "./linear-trajectory";
export * from "./linear-policy";
