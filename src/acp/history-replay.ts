import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { Message } from "../model/types.js";
import { toolEndUpdate } from "./event-updates.js";
import { toolCallView } from "./tool-call-view.js";

function resultText(content: string | Array<{ type: string; text?: string }>): string {
  return typeof content === "string"
    ? content
    : content
        .flatMap((block) => (block.type === "text" && block.text ? [block.text] : []))
        .join("\n");
}

/**
 * A stored conversation as the `session/update`s `session/load` replays: the user's text,
 * the agent's text, each tool call and its result, in order.
 */
export function historyUpdates(history: readonly Message[], workspace: string): SessionUpdate[] {
  const updates: SessionUpdate[] = [];
  for (const message of history) {
    const blocks =
      typeof message.content === "string"
        ? [{ type: "text" as const, text: message.content }]
        : message.content;
    for (const block of blocks) {
      if (block.type === "text" && block.text !== "") {
        updates.push({
          sessionUpdate: message.role === "user" ? "user_message_chunk" : "agent_message_chunk",
          content: { type: "text", text: block.text },
        });
      } else if (block.type === "tool_use") {
        const view = toolCallView(block.name, block.input, workspace);
        updates.push({
          sessionUpdate: "tool_call",
          toolCallId: block.id,
          title: view.title,
          kind: view.kind,
          status: "in_progress",
          locations: view.locations,
          content: view.content,
          rawInput: block.input,
        });
      } else if (block.type === "tool_result") {
        updates.push(
          toolEndUpdate(block.tool_use_id, resultText(block.content), block.is_error === true),
        );
      }
    }
  }
  return updates;
}
