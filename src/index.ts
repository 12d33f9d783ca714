/** The package entry: the public API of rudder as a library. */
export type { AgentEvent, AgentEventSink, TurnOutcome } from "./agent/events.js";
