/**
 * Issue 26, point 6, the gateway's path (the page and chat channels): a channel's rudder agent
 * runs in the sandbox, and its `rm` of a file in the workspace becomes a permission request
 * the page answers, with no ask rule of the user's; a denial keeps the file.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startRudderGateway, type TestGateway } from "../gateway/helpers.js";
import {
  type FakeMessagesApi,
  lastToolResults,
  startFakeMessagesApi,
} from "../helpers/fake-messages-api.js";
import { waitFor } from "../helpers/wait-for.js";
import { NO_BUBBLEWRAP } from "../sandbox/sandbox-helpers.js";

let api: FakeMessagesApi;
let gateway: TestGateway;
let workspace: string;

beforeAll(async () => {
  if (NO_BUBBLEWRAP) return;
  api = await startFakeMessagesApi({
    fallback: (request) => ({
      text: `tool said: ${JSON.stringify(lastToolResults(request)[0]?.content ?? "")}`,
    }),
  });
  workspace = mkdtempSync(join(tmpdir(), "rudder-destroy-ask-"));
  gateway = await startRudderGateway({ prefix: "destroy-ask", apiUrl: api.url, workspace });
});

afterAll(async () => {
  await gateway?.cleanup();
  await api?.close();
  if (workspace !== undefined) rmSync(workspace, { recursive: true, force: true });
});

it.skipIf(NO_BUBBLEWRAP)(
  "asks the page before rm in the sandbox, and a denial keeps the file",
  async () => {
    const kept = join(workspace, "kept.txt");
    writeFileSync(kept, "precious");
    api.push({ toolUse: { name: "Bash", input: { command: "rm kept.txt" } } });
    await gateway.api("POST", "/api/channels/destroy/messages", { text: "delete kept.txt" });
    const pending = await waitFor(async () => {
      const listed = await gateway.api("GET", "/api/channels/destroy/permissions");
      return (listed.body as { requests: { id: string }[] }).requests[0];
    }, "a pending permission request");
    expect(JSON.stringify(pending)).toContain("rm kept.txt");
    await gateway.api("POST", `/api/channels/destroy/permissions/${pending.id}`, {
      decision: "deny",
      message: "keep it",
    });
    await waitFor(async () => {
      const messages = await gateway.messages("destroy");
      return messages.find((message) => message.kind === "reply")?.text;
    }, "the reply");
    expect(existsSync(kept)).toBe(true);
  },
);
