/**
 * One model call of a turn: `model_start`, the tools warmed while the model answers, the text
 * streamed as `text_delta` events (and kept, for a partial answer should the call be stopped),
 * a retry announced as `model_retry`. Resolves with the model's outcome; never rejects.
 */
import type { Message, Model, ModelOutcome } from "../model/types.js";
import { loadBashParser } from "../permissions/bash-parser.js";
import { showsShellSyntax } from "../permissions/plain-command.js";
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
 * Whether a call of the tool named `name` is judged as a bash command. The gate reads shell
 * syntax with a grammar loaded at the first command that has some (bash-parser.ts; plain words
 * need none: plain-command.ts); it starts loading as soon as the command streaming in shows
 * shell syntax, while the model still streams the rest, rather than after.
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
  let grammarWanted = false;
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
    onToolInput: (name, json) => {
      if (grammarWanted || !judgesBash(dependencies.tools, name)) return;
      if (!showsShellSyntax(commandSoFar(json))) return;
      grammarWanted = true;
      // Errors are reported where the command is judged (prepare-tool-use.ts), which loads again.
      loadBashParser().catch(() => {});
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

/**
 * The `command` field's text so far in a streamed tool input's JSON (a prefix of it), escapes
 * left as written: a backslash is shell syntax too (a quote, a newline), which is what matters.
 */
function commandSoFar(json: string): string {
  const match = /"command"\s*:\s*"((?:[^"\\]|\\.?)*)/.exec(json);
  return match?.[1] ?? "";
}
