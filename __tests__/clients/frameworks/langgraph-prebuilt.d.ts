// LangGraph publishes its prebuilt agents under an `exports` subpath that this repo's node10 resolution cannot
// see; the declaration points the subpath at the package's own typings (Jest resolves the runtime file itself).
declare module "@langchain/langgraph/prebuilt" {
  export * from "@langchain/langgraph/dist/prebuilt/index.js";
}
