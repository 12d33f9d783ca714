/**
 * One model call of a turn: `model_start`, the tools warmed while the model answers, the text
 * streamed as `text_delta` events (and kept, for a partial answer should the call be stopped),
 * a retry announced as `model_retry`. Resolves with the model's outcome; never rejects.
 */
import type { Message, Model, ModelOutcome } from "../model/types.js";
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
