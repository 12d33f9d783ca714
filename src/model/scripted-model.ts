import type {
  ContentBlock,
  Message,
  Model,
  ModelError,
  ModelOutcome,
  ModelRequest,
  ModelResponse,
  ToolSpec,
  Usage,
} from "./types.js";
import { emptyUsage } from "./types.js";

/** A reply to script: content (a string is one text block), optional stop reason and usage. */
export interface ScriptedReply {
  content: string | ContentBlock[];
  stopReason?: string | null;
  usage?: Partial<Usage>;
  id?: string;
}

/** Streams `text` (if any), then waits until the request is aborted and reports `aborted`. */
export interface ScriptedHang {
  hangUntilAborted: true;
  text?: string;
}

export type ScriptedStep =
  | ScriptedReply
  | ModelError
  | ScriptedHang
  | ((request: ModelRequest, index: number) => ScriptedStep | Promise<ScriptedStep>);

/** What the loop asked for, copied at call time so later mutation does not rewrite it. */
export interface RecordedModelRequest {
  system: string | undefined;
  messages: Message[];
  tools: ToolSpec[];
  maxTokens: number | undefined;
}

export interface ScriptedModel extends Model {
  readonly requests: RecordedModelRequest[];
  push(...steps: ScriptedStep[]): void;
  /** Steps not yet consumed. */
  remaining(): number;
}

/** A reply with one text block. */
export function textReply(text: string): ScriptedReply {
  return { content: [{ type: "text", text }] };
}

let toolUseCounter = 0;

/** A reply that calls one tool, optionally after some text; the id is generated when absent. */
export function toolUseReply(
  name: string,
  input: Record<string, unknown>,
  options: { id?: string; text?: string } = {},
): ScriptedReply {
  const content: ContentBlock[] = [];
  if (options.text !== undefined) content.push({ type: "text", text: options.text });
  const id = options.id ?? `toolu_scripted_${++toolUseCounter}`;
  content.push({ type: "tool_use", id, name, input });
  return { content };
}

function isModelError(step: object): step is ModelError {
  return "subtype" in step;
}

/**
 * An in-process fake model for loop tests: answers each call with the next
 * step and records every request. Never rejects: an exhausted script, an abort
 * and a throwing step function all come back as error outcomes.
 */
export function createScriptedModel(
  steps: ScriptedStep[] = [],
  options: { name?: string } = {},
): ScriptedModel {
  const script = [...steps];
  const requests: RecordedModelRequest[] = [];
  let replies = 0;

  async function answer(request: ModelRequest, step: ScriptedStep): Promise<ModelOutcome> {
    if (typeof step === "function")
      return answer(request, await step(request, requests.length - 1));
    if (isModelError(step)) return { ok: false, error: { ...step } };
    if ("hangUntilAborted" in step) {
      if (step.text) request.onTextDelta?.(step.text);
      await new Promise<void>((resolve) => {
        if (request.signal.aborted) resolve();
        else request.signal.addEventListener("abort", () => resolve(), { once: true });
      });
      return { ok: false, error: { subtype: "aborted", message: "Request aborted" } };
    }
    const content: ContentBlock[] =
      typeof step.content === "string" ? [{ type: "text", text: step.content }] : step.content;
    for (const block of content) {
      if (block.type === "text" && block.text !== "") request.onTextDelta?.(block.text);
    }
    const hasToolUse = content.some((block) => block.type === "tool_use");
    const response: ModelResponse = {
      id: step.id ?? `msg_scripted_${++replies}`,
      content: structuredClone(content),
      stopReason:
        step.stopReason !== undefined ? step.stopReason : hasToolUse ? "tool_use" : "end_turn",
      usage: { ...emptyUsage(), ...step.usage },
    };
    return { ok: true, response };
  }

  return {
    name: options.name ?? "scripted",
    requests,
    push: (...more) => {
      script.push(...more);
    },
    remaining: () => script.length,
    complete: async (request) => {
      requests.push({
        system: request.system,
        messages: structuredClone(request.messages),
        tools: structuredClone(request.tools),
        maxTokens: request.maxTokens,
      });
      if (request.signal.aborted) {
        return { ok: false, error: { subtype: "aborted", message: "Request aborted" } };
      }
      const step = script.shift();
      if (step === undefined) {
        return {
          ok: false,
          error: {
            subtype: "api_error",
            message: `scripted model: script exhausted after ${requests.length - 1} replies`,
          },
        };
      }
      try {
        return await answer(request, step);
      } catch (error) {
        return {
          ok: false,
          error: { subtype: "api_error", message: `scripted model: ${String(error)}` },
        };
      }
    },
  };
}
