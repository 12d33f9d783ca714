import { type BashToolOptions, createBashTool } from "./bash-tool.js";
import { createEditFileTool } from "./edit-file-tool.js";
import { createGlobTool } from "./glob-tool.js";
import { createReadFileTool } from "./read-file-tool.js";
import type { AnyTool } from "./types.js";
import { createWriteFileTool } from "./write-file-tool.js";

/** The five tools, in the order the model is shown them. */
export const TOOL_NAMES = ["bash", "read_file", "write_file", "edit_file", "glob"] as const;

export type ToolName = (typeof TOOL_NAMES)[number];

export function createDefaultTools(options: BashToolOptions = {}): AnyTool[] {
  return [
    createBashTool(options),
    createReadFileTool(),
    createWriteFileTool(),
    createEditFileTool(),
    createGlobTool(),
  ];
}
