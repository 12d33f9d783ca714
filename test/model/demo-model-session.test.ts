import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Session } from "../../src/agent/session.js";
import { createDemoModel, DEMO_LABEL } from "../../src/model/demo-model.js";
import { emptyRules } from "../../src/permissions/types.js";
import { createDefaultTools } from "../../src/tools/default-tools.js";

describe("demo model in a session", () => {
  const folders: string[] = [];
  afterEach(() => {
    for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
  });

  it("runs the real tools in a workspace through a session, waking for the task", async () => {
    const workspace = realpathSync(mkdtempSync(join(tmpdir(), "rudder-demo-")));
    folders.push(workspace);
    writeFileSync(join(workspace, "README.md"), "# Demo workspace\nhello\n");
    writeFileSync(join(workspace, "notes.txt"), "x\n");
    const session = new Session({
      model: createDemoModel(),
      tools: createDefaultTools(),
      rules: emptyRules(),
      workspace,
    });
    const first = await session.send("show me around");
    expect(first.isError).toBe(false);
    const woken = (await session.wake()) ?? first;
    expect(woken.isError).toBe(false);
    const texts = session.history
      .filter((message) => message.role === "assistant")
      .flatMap((message) => (typeof message.content === "string" ? [] : message.content))
      .filter((block) => block.type === "text")
      .map((block) => (block as { text: string }).text);
    expect(texts.length).toBeGreaterThanOrEqual(4);
    for (const text of texts) expect(text.startsWith(DEMO_LABEL)).toBe(true);
    const final = texts.at(-1)!;
    expect(final).toContain("read_file read README.md");
    expect(final).toMatch(/bg_0001 completed; its output: 2/);
  });
});
