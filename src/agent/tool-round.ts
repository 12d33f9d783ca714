/**
 * The tool calls of one model reply, run one after another. Once the turn is stopped or a
 * hook halts it, the calls left get a "not run" result each (every tool_use needs its
 * tool_result).
 */
import type { ToolResultBlock, ToolUseBlock } from "../model/types.js";
import type { DispatchContext } from "./dispatch-context.js";
import { dispatchToolUse } from "./tool-dispatch.js";

/** Every tool_use needs a tool_result, even when the turn was cut short. */
function interruptedResults(blocks: readonly ToolUseBlock[]): ToolResultBlock[] {
  return blocks.map((block) => ({
    type: "tool_result",
    tool_use_id: block.id,
    content: "Not run: the turn was stopped before this tool ran.",
    is_error: true,
  }));
}

/** `haltReason`: set when a hook halted the turn (its reason, maybe empty). */
export async function runToolRound(
  toolUses: readonly ToolUseBlock[],
  context: Omit<DispatchContext, "onHalt">,
): Promise<{ results: ToolResultBlock[]; haltReason: string | undefined }> {
  const results: ToolResultBlock[] = [];
  let haltReason: string | undefined;
  const onHalt = (reason: string) => {
    haltReason ??= reason;
  };
  for (const [index, block] of toolUses.entries()) {
    if (context.signal.aborted || haltReason !== undefined) {
      results.push(...interruptedResults(toolUses.slice(index)));
      break;
    }
    results.push(await dispatchToolUse(block, { ...context, onHalt }));
  }
  return { results, haltReason };
}
