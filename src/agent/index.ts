// Public surface of the agent component: the scripted weather verify agent and its texts.
// Each module of the component adds its exports here.
export * from "./texts";
export * from "./schedule";
export * from "./sse";
export * from "./chat-client";
export * from "./weather-agent";
