import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { AgentEvent } from "../agent/events.js";
import { toolCallView } from "./tool-call-view.js";

/**
 * The `session/update`s of one event of the agent: streamed text as `agent_message_chunk`,
 * a tool call as `tool_call` (in progress, with its kind, title, files and an edit's diff),
 * its end as `tool_call_update` (completed or failed, with its output). Other events show
 * nothing.
 */
export function eventUpdates(event: AgentEvent, workspace: string): SessionUpdate[] {
  switch (event.type) {
    case "text_delta":
      return [
        { sessionUpdate: "agent_message_chunk", content: { type: "text", text: event.text } },
      ];
    case "tool_start": {
      const view = toolCallView(event.name, event.input, workspace);
      return [
        {
          sessionUpdate: "tool_call",
          toolCallId: event.toolUseId,
          title: view.title,
          kind: view.kind,
          status: "in_progress",
          locations: view.locations,
          content: view.content,
          rawInput: event.input,
        },
      ];
    }
    case "tool_end":
      return [toolEndUpdate(event.toolUseId, event.content, event.isError)];
    default:
      return [];
  }
}

export function toolEndUpdate(toolUseId: string, output: string, isError: boolean): SessionUpdate {
  return {
    sessionUpdate: "tool_call_update",
    toolCallId: toolUseId,
    status: isError ? "failed" : "completed",
    content: output === "" ? [] : [{ type: "content", content: { type: "text", text: output } }],
    rawOutput: { content: output, is_error: isError },
  };
}
