/**
 * Issue 26, point 6: in the sandbox, a host that can ask (`--permission-prompt-tool stdio`,
 * as the gateway starts its rudder children) is asked before a command destroys work; a
 * headless run keeps the sandbox's posture (the command runs); `sandbox.askBeforeDestroying:
 * false` turns the question off. Through the real CLI, the real bubblewrap and the fake
 * Messages API.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { NO_BUBBLEWRAP } from "../sandbox/sandbox-helpers.js";
import { protocolHarness, STREAM_ARGS, writeSettings } from "./helpers.js";

const harness = protocolHarness();
afterEach(() => harness.cleanup());

const PROMPT = ["--permission-prompt-tool", "stdio"];

async function removeWith(args: string[], settings?: unknown) {
  const api = await harness.api([
    { toolUse: { name: "Bash", input: { command: "rm precious.txt && echo removed" } } },
    { text: "done" },
  ]);
  const sandbox = harness.sandbox(api);
  if (settings !== undefined) writeSettings(sandbox.workspace, settings);
  const precious = join(sandbox.workspace, "precious.txt");
  writeFileSync(precious, "a day's work\n");
  const rudder = harness.start(sandbox, [...STREAM_ARGS, ...args]);
  rudder.sendUser("clean up");
  return { rudder, precious };
}

describe.skipIf(NO_BUBBLEWRAP)("asking before destroying work in the sandbox", () => {
  it("asks a host with a permission prompt, and a denial keeps the file", async () => {
    const { rudder, precious } = await removeWith(PROMPT);
    const request = await rudder.waitFor((line) => line.type === "control_request");
    expect(request.request).toMatchObject({
      subtype: "can_use_tool",
      tool_name: "Bash",
      input: { command: "rm precious.txt && echo removed" },
    });
    rudder.send({
      type: "control_response",
      response: {
        subtype: "success",
        request_id: request.request_id,
        response: { behavior: "deny", message: "keep it" },
      },
    });
    await rudder.waitForResult();
    rudder.end();
    expect(await rudder.exited).toBe(0);
    expect(existsSync(precious)).toBe(true);
  });

  it("runs it headless, where nobody can answer: the sandbox's posture", async () => {
    const { rudder, precious } = await removeWith([]);
    await rudder.waitForResult();
    rudder.end();
    expect(await rudder.exited).toBe(0);
    expect(rudder.lines.some((line) => line.type === "control_request")).toBe(false);
    expect(existsSync(precious)).toBe(false);
  });

  it("runs it without asking when sandbox.askBeforeDestroying is false", async () => {
    const { rudder, precious } = await removeWith(PROMPT, {
      sandbox: { askBeforeDestroying: false },
    });
    await rudder.waitForResult();
    rudder.end();
    expect(await rudder.exited).toBe(0);
    expect(rudder.lines.some((line) => line.type === "control_request")).toBe(false);
    expect(existsSync(precious)).toBe(false);
  });
});
