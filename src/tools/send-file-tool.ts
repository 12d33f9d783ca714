/**
 * `send_file`: the agent sends a file of its workspace to the conversation it is in. Only
 * agents behind the gateway have it (rudder's channel tools, `rudder mcp-channel-tools`); the
 * tool checks the file and answers the model, and the gateway, which sees the call and its
 * successful result in the agent's stream, delivers the file with the turn's reply. The file
 * is judged on the path actually opened, as the file tools do: inside the workspace, no
 * symbolic link leading out, one hard link only, within the size cap.
 */
import * as v from "valibot";
import { byteSize } from "./byte-size.js";
import { toolJsonSchema } from "./json-schema.js";
import { overSendCap } from "./over-send-cap.js";
import type { Tool, ToolResult } from "./types.js";
import { openToolFile } from "./workspace-file.js";
import { filePathInput } from "./workspace-path.js";

const sendFileInput = v.object({
  path: filePathInput,
  caption: v.optional(
    v.pipe(
      v.string(),
      v.maxLength(1000),
      v.description("A short text shown with the file (markdown)."),
    ),
  ),
});

export type SendFileInput = v.InferOutput<typeof sendFileInput>;

/** `maxBytes`: the largest file sent (the gateway's `RUDDER_ATTACHMENT_MAX_MB`). */
export function createSendFileTool(maxBytes: number): Tool<SendFileInput> {
  const description = [
    "Send a file from the workspace to the conversation you are in (the chat or the web page the message came from): an image is shown inline, anything else as a file to download.",
    "",
    `- The file must be inside the workspace and at most ${byteSize(maxBytes)}.`,
    "- People get it with your answer at the end of this turn; say in your answer what it is.",
    "- Write the file first (with your tools), then send it; send each file once.",
  ].join("\n");
  return {
    name: "send_file",
    description,
    inputSchema: sendFileInput,
    get jsonSchema() {
      return toolJsonSchema(sendFileInput);
    },
    async execute(input, context): Promise<ToolResult> {
      const opened = await openToolFile(context, input.path, "read");
      if (!opened.ok) return { content: opened.error, isError: true };
      await opened.handle.close();
      const over = overSendCap(input.path, opened.size, maxBytes);
      if (over !== undefined) {
        return {
          content: `${over} Make it smaller (compress it, split it) and send that.`,
          isError: true,
        };
      }
      if (opened.size === 0) return { content: `${input.path} is empty.`, isError: true };
      return {
        content: `${input.path} (${byteSize(opened.size)}) will be sent to the conversation with your answer.`,
        isError: false,
      };
    },
  };
}
