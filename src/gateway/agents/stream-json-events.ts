import type { AgentEvent, TaskStatus, TurnOutcome } from "../../agent/events.js";

type Usage = TurnOutcome["usage"];
type ToolEnd = Extract<AgentEvent, { type: "tool_end" }>;
type ImageBlock = Extract<
  Exclude<NonNullable<ToolEnd["blocks"]>, string>[number],
  { type: "image" }
>;
type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}

function number(value: unknown, fallback = 0): number {
  return typeof value === "number" && Number.isFinite(value) ? value : fallback;
}

function toUsage(value: unknown): Usage {
  const usage = isObject(value) ? value : {};
  return {
    input_tokens: number(usage.input_tokens),
    output_tokens: number(usage.output_tokens),
    cache_creation_input_tokens: number(usage.cache_creation_input_tokens),
    cache_read_input_tokens: number(usage.cache_read_input_tokens),
  };
}

/** Tool result content is a string or a list of blocks; the page shows it as text. */
function toolResultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((block) => (isObject(block) && block.type === "text" ? text(block.text) : ""))
    .join("");
}

/**
 * What the page shows of a tool's own report (`tool_use_result`): the file, the structured
 * patch, the count of files found. The rest (a whole original file, every file name) stays out
 * of the event stream.
 */
function compactResponse(response: unknown): Json | undefined {
  if (!isObject(response)) return undefined;
  const kept: Json = {};
  for (const key of ["filePath", "type", "numFiles", "truncated", "structuredPatch"]) {
    if (response[key] !== undefined) kept[key] = response[key];
  }
  if (isObject(response.file) && typeof response.file.filePath === "string") {
    kept.filePath = response.file.filePath;
  }
  return Object.keys(kept).length === 0 ? undefined : kept;
}

/** Most bytes of images one tool result carries to the page (base64 characters). */
const MAX_IMAGE_CHARACTERS = 2_000_000;

/** The image blocks of a tool result (a screenshot read, an image made), within the cap. */
function imageBlocks(content: unknown): ImageBlock[] {
  if (!Array.isArray(content)) return [];
  const images: ImageBlock[] = [];
  let total = 0;
  for (const block of content) {
    if (!isObject(block) || block.type !== "image" || !isObject(block.source)) continue;
    const { source } = block;
    if (source.type !== "base64" || typeof source.data !== "string") continue;
    total += source.data.length;
    if (total > MAX_IMAGE_CHARACTERS) break;
    images.push({
      type: "image",
      source: { type: "base64", media_type: text(source.media_type), data: source.data },
    });
  }
  return images;
}

function taskStatus(value: unknown): TaskStatus {
  if (value === "completed" || value === "running") return value;
  return "failed";
}

/** A `result` line of the stream-json dialect as the agent's turn outcome. */
export function outcomeFromResultLine(line: Json): TurnOutcome {
  const outcome: TurnOutcome = {
    result: text(line.result),
    isError: line.is_error === true,
    subtype: text(line.subtype) || "success",
    numTurns: number(line.num_turns),
    durationMs: number(line.duration_ms),
    usage: toUsage(line.usage),
    totalCostUsd: number(line.total_cost_usd),
    terminalReason: text(line.terminal_reason) || "completed",
  };
  if (typeof line.api_error_status === "number") outcome.apiErrorStatus = line.api_error_status;
  return outcome;
}

/**
 * A hook that failed (timed out, crashed, bad output), from a `system` `hook_response` line of
 * an agent run with `--include-hook-events` (rudder's and Claude Code's); undefined for any
 * other line, a hook that succeeded among them.
 */
export function hookProblemOf(line: unknown): { event: string; message: string } | undefined {
  if (!isObject(line) || line.type !== "system" || line.subtype !== "hook_response") return;
  const outcome = text(line.outcome);
  if (outcome === "success" || outcome === "") return undefined;
  const event = text(line.hook_event) || text(line.hook_name) || "hook";
  const said = (text(line.output) || text(line.stderr)).trim();
  if (said !== "") return { event, message: said };
  // Claude Code says no more of a hook past its timeout than `cancelled` (2.1.328).
  const name = text(line.hook_name) || event;
  const exit = typeof line.exit_code === "number" ? ` (exit status ${line.exit_code})` : "";
  const message =
    outcome === "cancelled"
      ? `hook ${name} did not finish: it timed out or was stopped`
      : `hook ${name} failed${exit}`;
  return { event, message };
}

/**
 * Maps a child's stream-json output lines (Claude Code's dialect, which
 * `rudder run` also speaks) to the agent's event union, for the page.
 * Stateful per process: it remembers tool names for their results, and
 * whether a text block already streamed as deltas (then the whole
 * `assistant` block is not sent again). Lines it does not know map to nothing.
 */
export class StreamJsonEventMapper {
  readonly #toolNames = new Map<string, string>();
  #streamedText = false;

  map(line: unknown): AgentEvent[] {
    if (!isObject(line)) return [];
    switch (line.type) {
      case "stream_event":
        return this.#streamEvent(line.event);
      case "assistant":
        return this.#assistant(line.message);
      case "user":
        return this.#user(line);
      case "system":
        return this.#system(line);
      case "result":
        this.#streamedText = false;
        return [{ type: "turn_end", outcome: outcomeFromResultLine(line) }];
      default:
        return [];
    }
  }

  #streamEvent(event: unknown): AgentEvent[] {
    if (!isObject(event) || event.type !== "content_block_delta") return [];
    const delta = event.delta;
    if (!isObject(delta) || delta.type !== "text_delta") return [];
    const chunk = text(delta.text);
    if (chunk === "") return [];
    this.#streamedText = true;
    return [{ type: "text_delta", text: chunk }];
  }

  #assistant(message: unknown): AgentEvent[] {
    const streamed = this.#streamedText;
    this.#streamedText = false;
    if (!isObject(message) || !Array.isArray(message.content)) return [];
    const events: AgentEvent[] = [];
    for (const block of message.content) {
      if (!isObject(block)) continue;
      if (block.type === "text" && !streamed && text(block.text) !== "") {
        events.push({ type: "text_delta", text: text(block.text) });
      } else if (block.type === "tool_use") {
        const toolUseId = text(block.id);
        const name = text(block.name);
        this.#toolNames.set(toolUseId, name);
        events.push({
          type: "tool_start",
          toolUseId,
          name,
          input: isObject(block.input) ? block.input : {},
        });
      }
    }
    return events;
  }

  #user(line: Json): AgentEvent[] {
    const message = line.message;
    if (!isObject(message) || !Array.isArray(message.content)) return [];
    const events: AgentEvent[] = [];
    const results = message.content.filter(
      (block): block is Json => isObject(block) && block.type === "tool_result",
    );
    for (const block of results) {
      const toolUseId = text(block.tool_use_id);
      const response = results.length === 1 ? compactResponse(line.tool_use_result) : undefined;
      const images = imageBlocks(block.content);
      events.push({
        type: "tool_end",
        toolUseId,
        name: this.#toolNames.get(toolUseId) ?? "",
        content: toolResultText(block.content),
        isError: block.is_error === true,
        ...(response === undefined ? {} : { response }),
        ...(images.length === 0 ? {} : { blocks: images }),
      });
      this.#toolNames.delete(toolUseId);
    }
    return events;
  }

  #system(line: Json): AgentEvent[] {
    if (line.subtype === "task_notification") {
      return [
        {
          type: "task_end",
          taskId: text(line.task_id),
          command: text(line.command) || text(line.description),
          status: taskStatus(line.status),
          exitCode: typeof line.exit_code === "number" ? line.exit_code : null,
          summary: text(line.summary),
        },
      ];
    }
    const hook = hookProblemOf(line);
    if (hook !== undefined) return [{ type: "hook_warning", ...hook }];
    if (line.subtype === "api_retry") {
      return [
        {
          type: "model_retry",
          attempt: number(line.attempt),
          delayMs: number(line.retry_delay_ms ?? line.delay_ms),
          ...(typeof line.error_status === "number" ? { status: line.error_status } : {}),
          message: text(line.error) || "retrying the model call",
        },
      ];
    }
    return [];
  }
}
