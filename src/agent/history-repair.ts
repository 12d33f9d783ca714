import type { ContentBlock, Message, ToolResultBlock } from "../model/types.js";
import type { ToolKill } from "./running-tools.js";

/**
 * Makes a history the API accepts again after a process died mid-turn: a trailing assistant
 * `tool_use` without results gets error results saying what is known.
 *
 * A tool named by a `kill` (rudder's exit killed its process tree, see `RunningTools`) was
 * killed at that time: it may have done part of its work, nothing after. Of any other, the
 * transcript cannot tell whether it finished (a result computed but not yet recorded), ran
 * partly, or was killed with the process, so the model is told exactly that, with the time of
 * the conversation's last record (`lastRecordAt`, the file's modification time) when known.
 */
export function repairHistory(
  history: Message[],
  lastRecordAt?: Date,
  kills: readonly ToolKill[] = [],
): Message[] {
  const last = history.at(-1);
  if (last === undefined || last.role !== "assistant" || typeof last.content === "string") {
    return history;
  }
  const uses = last.content.filter((block: ContentBlock) => block.type === "tool_use");
  if (uses.length === 0) return history;
  const when =
    lastRecordAt === undefined ? "" : ` (its last record is from ${lastRecordAt.toISOString()})`;
  const results: ToolResultBlock[] = uses.map((block) => {
    const kill = kills.find((each) => each.toolUseIds.includes(block.id));
    return {
      type: "tool_result",
      tool_use_id: block.id,
      content: kill === undefined ? unknownResult(when) : killedResult(kill),
      is_error: true,
    };
  });
  return [...history, { role: "user", content: results }];
}

function unknownResult(when: string): string {
  return (
    `Result unknown: the agent process ended${when} before a result of this tool call was ` +
    "recorded. The tool may have finished, run in part, or been killed with the process, so " +
    "some, all or none of its effects may have happened: check before running it again."
  );
}

function killedResult(kill: ToolKill): string {
  const why =
    kill.cause === "exit"
      ? "as the agent process ended"
      : `when the agent process was stopped (${kill.cause})`;
  return (
    `Killed: the tool's process tree was killed at ${kill.at}, ${why}, before its result ` +
    "was recorded. It may have done part of its work before then (some of its effects may " +
    "have happened), nothing after: check before running it again."
  );
}
