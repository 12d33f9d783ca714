/**
 * What a Claude Code session resumed after its process died already holds: the prompts of the
 * turn it was in (its transcript's user prompts after the last assistant message that ended a
 * turn). A host that restarts delivers those messages again, unanswered as they are (the
 * gateway replays what was not answered); sent as they are, the model would read each twice,
 * since Claude Code adds the new prompt after the held one. So a message the session holds is
 * written as a note asking Claude Code to go on instead, in the words Claude Code itself uses
 * when its worker restarts mid-turn: the model reads the message once.
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import type { UserContentBlock } from "./attached-images.js";
import { claudeSessionFile } from "./session-file.js";
import { userLine, userLineText } from "./stream-lines.js";

/** Claude Code's own words for a turn its restarted worker goes on with (2.1.328). */
export const RESUMED_TURN_NOTE =
  "This session's worker process was restarted. If your previous turn was already complete, take no action and wait for the next event. Otherwise, continue from where you left off.";

/** The unfinished turn is at the end: a tail this long holds it (a cut first line is skipped). */
const TAIL_BYTES = 4 * 1024 * 1024;

type Entry = Record<string, unknown>;

function isObject(value: unknown): value is Entry {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The last `TAIL_BYTES` of a file as text; empty when it cannot be read (no session yet). */
function readTail(path: string): string {
  let descriptor: number | undefined;
  try {
    descriptor = openSync(path, "r");
    const size = fstatSync(descriptor).size;
    const length = Math.min(size, TAIL_BYTES);
    const buffer = Buffer.alloc(length);
    readSync(descriptor, buffer, 0, length, size - length);
    return buffer.toString("utf8");
  } catch {
    return "";
  } finally {
    if (descriptor !== undefined) closeSync(descriptor);
  }
}

/** The prompt text of a transcript entry: a user message's text or a queued command's. */
function promptsOf(entry: Entry): string[] {
  if (entry.type === "attachment" && isObject(entry.attachment)) {
    const { type, prompt } = entry.attachment;
    return type === "queued_command" && typeof prompt === "string" ? [prompt] : [];
  }
  if (entry.type !== "user" || entry.isMeta === true || !isObject(entry.message)) return [];
  const content = entry.message.content;
  if (typeof content === "string") return [content];
  if (!Array.isArray(content)) return [];
  return content.flatMap((block) =>
    isObject(block) && block.type === "text" && typeof block.text === "string" ? [block.text] : [],
  );
}

/** The prompts after the last assistant message that ended a turn, oldest first. */
export function unfinishedTurnPrompts(transcript: string): string[] {
  const lines = transcript.split("\n");
  const prompts: string[] = [];
  for (let index = lines.length - 1; index >= 0; index -= 1) {
    let entry: unknown;
    try {
      entry = JSON.parse(lines[index] as string);
    } catch {
      continue;
    }
    if (!isObject(entry)) continue;
    if (entry.type === "assistant" && isObject(entry.message)) {
      const stop = entry.message.stop_reason;
      // A tool call, or a message cut off while streaming (no stop reason), goes on the turn.
      if (typeof stop === "string" && stop !== "tool_use") break;
      continue;
    }
    prompts.unshift(...promptsOf(entry));
  }
  return prompts;
}

/** The prompts a resumed session holds; each taken once, the rest forgotten after a turn. */
export class HeldPrompts {
  #prompts: string[];

  constructor(prompts: string[]) {
    this.#prompts = prompts;
  }

  /**
   * The line that delivers `text`: as ever, or the note to go on when the session holds the
   * message already (what would be written is compared, fence and all).
   */
  lineFor(
    text: string,
    uuid: string,
    command: boolean,
    blocks: readonly UserContentBlock[] = [],
  ): Record<string, unknown> {
    const line = userLine(text, uuid, command, blocks);
    const index = this.#prompts.indexOf(userLineText(line));
    if (index === -1) return line;
    this.#prompts.splice(index, 1);
    return userLine(RESUMED_TURN_NOTE, uuid, true);
  }

  forget(): void {
    this.#prompts = [];
  }
}

/**
 * What a child started with `--resume <sessionId>` holds, from Claude Code's transcript of the
 * session (read here, at the spawn); undefined for a new session. A rudder child has no such
 * transcript, so nothing is held: it keeps its own and drops what it holds itself.
 */
export function heldPromptsOf(
  sessionId: string | null,
  env: NodeJS.ProcessEnv,
  cwd: string | undefined,
): HeldPrompts | undefined {
  if (!sessionId) return undefined;
  const transcript = readTail(claudeSessionFile(env, cwd ?? process.cwd(), sessionId));
  return new HeldPrompts(unfinishedTurnPrompts(transcript));
}
