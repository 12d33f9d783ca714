import { describe, expect, it } from "vitest";
import { pickFileToRead } from "../../src/model/demo-conversation.js";
import { createDemoModel, DEMO_LABEL } from "../../src/model/demo-model.js";
import type {
  Message,
  ModelRequest,
  ModelResponse,
  ToolSpec,
  ToolUseBlock,
} from "../../src/model/types.js";

const TOOLS: ToolSpec[] = ["glob", "read_file", "bash"].map((name) => ({
  name,
  description: name,
  input_schema: { type: "object" },
}));

const NOTICE = [
  "[Automated notice from rudder: background task results. This is not user input.]",
  "<task_notification>",
  "<task_id>bg_0001</task_id>",
  "<status>completed</status>",
  "<command>sleep 1 &amp;&amp; ls -1 | wc -l</command>",
  "<summary>3</summary>",
  "</task_notification>",
].join("\n");

async function reply(messages: Message[], deltas: string[] = []): Promise<ModelResponse> {
  const request: ModelRequest = {
    messages,
    tools: TOOLS,
    signal: new AbortController().signal,
    onTextDelta: (text) => deltas.push(text),
  };
  const outcome = await createDemoModel().complete(request);
  if (!outcome.ok) throw new Error(outcome.error.message);
  return outcome.response;
}

function toolUse(response: ModelResponse): ToolUseBlock | undefined {
  return response.content.find((block): block is ToolUseBlock => block.type === "tool_use");
}

function answer(messages: Message[], response: ModelResponse, result: string): void {
  messages.push({ role: "assistant", content: response.content });
  const use = toolUse(response)!;
  messages.push({
    role: "user",
    content: [{ type: "tool_result", tool_use_id: use.id, content: result }],
  });
}

describe("demo model", () => {
  it("tours glob, read_file and a background bash, deciding from the conversation", async () => {
    const messages: Message[] = [{ role: "user", content: "what can you do?" }];
    const deltas: string[] = [];
    const first = await reply(messages, deltas);
    expect(first.content[0]).toMatchObject({ type: "text" });
    expect(deltas.join("")).toBe((first.content[0] as { text: string }).text);
    expect(deltas.join("").startsWith(DEMO_LABEL)).toBe(true);
    expect(toolUse(first)).toMatchObject({ name: "glob", input: { pattern: "**/*" } });
    expect(first.stopReason).toBe("tool_use");

    answer(messages, first, "docs/guide.md\npackage.json\nREADME.md\nsrc/index.ts");
    const second = await reply(messages);
    expect(toolUse(second)).toMatchObject({ name: "read_file", input: { path: "README.md" } });

    answer(messages, second, "1\t# My project\n2\tIt does things.");
    const third = await reply(messages);
    expect(toolUse(third)).toMatchObject({
      name: "bash",
      input: { run_in_background: true },
    });

    answer(messages, third, "Started background task bg_0001.");
    const waiting = await reply(messages);
    expect(toolUse(waiting)).toBeUndefined();
    expect(waiting.stopReason).toBe("end_turn");
    expect((waiting.content[0] as { text: string }).text).toMatch(/^\[demo model\].*running/);

    messages.push({ role: "assistant", content: waiting.content });
    messages.push({ role: "user", content: NOTICE });
    const summary = await reply(messages);
    const text = (summary.content[0] as { text: string }).text;
    expect(summary.stopReason).toBe("end_turn");
    expect(text.startsWith(DEMO_LABEL)).toBe(true);
    expect(text).toContain("read_file read README.md");
    expect(text).toContain("bg_0001 completed");
    expect(text).toContain("ANTHROPIC_API_KEY");
  });

  it("sums up at once when the notification rides with the tool result", async () => {
    const messages: Message[] = [{ role: "user", content: "go" }];
    const first = await reply(messages);
    answer(messages, first, "(no matches)");
    const second = await reply(messages);
    expect(toolUse(second)?.name).toBe("bash");
    answer(messages, second, "Started background task bg_0002.");
    const last = messages.at(-1)!;
    (last.content as Array<{ type: string; text?: string }>).push({ type: "text", text: NOTICE });
    const summary = await reply(messages);
    expect(toolUse(summary)).toBeUndefined();
    expect((summary.content[0] as { text: string }).text).toContain("bg_0001 completed");
  });

  it("picks a top-level README, else a plain top-level file", () => {
    expect(pickFileToRead("a/README.md\nLICENSE\nreadme.txt")).toBe("readme.txt");
    expect(pickFileToRead("src/x.ts\nnotes.md\nz")).toBe("notes.md");
    expect(pickFileToRead("src/x.ts\n(200 more omitted)")).toBe("src/x.ts");
    expect(pickFileToRead("(no matches)")).toBeUndefined();
    expect(pickFileToRead("src/a.ts\nLICENSE\n... 12 more paths omitted")).toBe("LICENSE");
  });
});
