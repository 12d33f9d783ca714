import type { SDKUserMessage } from "./agent-sdk-types.js";

function userMessage(text: string): SDKUserMessage {
  return {
    type: "user",
    message: { role: "user", content: text },
    parent_tool_use_id: null,
    session_id: "",
  };
}

/** An input iterable the test feeds by hand; `close()` ends it. */
export function inputQueue() {
  const queued: SDKUserMessage[] = [];
  let wake: (() => void) | undefined;
  let closed = false;
  const notify = (): void => {
    wake?.();
    wake = undefined;
  };
  return {
    push(text: string): void {
      queued.push(userMessage(text));
      notify();
    },
    close(): void {
      closed = true;
      notify();
    },
    async *messages(): AsyncGenerator<SDKUserMessage> {
      for (;;) {
        const next = queued.shift();
        if (next !== undefined) {
          yield next;
          continue;
        }
        if (closed) return;
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
    },
  };
}
