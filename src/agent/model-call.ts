/**
 * One model call of a turn: `model_start`, the tools warmed while the model answers, the text
 * streamed as `text_delta` events (and kept, for a partial answer should the call be stopped),
 * a retry announced as `model_retry`. Resolves with the model's outcome; never rejects.
 */
import type { Message, Model, ModelOutcome } from "../model/types.js";
import { loadBashParser } from "../permissions/bash-parser.js";
import type { AnyTool } from "../tools/types.js";
import type { RequestShape } from "./context-keeper.js";
import type { AgentEventSink } from "./events.js";

export interface ModelCallDependencies {
  model: Model;
  tools: readonly AnyTool[];
  maxTokens?: number;
  emit: AgentEventSink;
  signal: AbortSignal;
}

/** What the call streamed before it ended: the text so far and the message's id. */
export interface StreamedText {
  text: string;
  messageId: string;
}

/**
 * Whether a call of the tool named `name` is judged as a bash command. The gate reads bash with
 * a grammar loaded at the first command judged (bash-parser.ts); it starts loading as the call's
 * block starts, while the model still streams the command in, rather than after.
 */
function judgesBash(tools: readonly AnyTool[], name: string): boolean {
  const tool = tools.find((candidate) => candidate.name === name);
  return (tool?.aliasOf?.name ?? tool?.name) === "bash";
}

export async function callModel(
  history: Message[],
  shape: RequestShape,
  call: number,
  dependencies: ModelCallDependencies,
): Promise<{ reply: ModelOutcome; streamed: StreamedText }> {
  const { emit, signal } = dependencies;
  emit({ type: "model_start", call });
  let streamed: StreamedText = { text: "", messageId: "" };
  // Slow tool set-up (bash's sandbox) starts while the model answers.
  for (const tool of dependencies.tools) tool.warm?.();
  const reply = await dependencies.model.complete({
    ...shape,
    messages: history,
    tools: shape.tools,
    ...(dependencies.maxTokens === undefined ? {} : { maxTokens: dependencies.maxTokens }),
    signal,
    onMessageStart: (messageId) => {
      streamed = { text: "", messageId };
    },
    onTextDelta: (text) => {
      streamed.text += text;
      emit({ type: "text_delta", text });
    },
    onToolUseStart: (name) => {
      if (judgesBash(dependencies.tools, name)) {
        // Errors are reported where the command is judged (prepare-tool-use.ts), which loads again.
        loadBashParser().catch(() => {});
      }
    },
    onRetry: (retry) => {
      streamed = { text: "", messageId: "" };
      emit({
        type: "model_retry",
        attempt: retry.attempt,
        delayMs: retry.delayMs,
        ...(retry.status === undefined ? {} : { status: retry.status }),
        message: retry.message,
      });
    },
  });
  return { reply, streamed };
}
