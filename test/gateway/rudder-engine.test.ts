/**
 * The gateway with rudder itself as the engine (the default of `rudder
 * serve`): a background task that outlives its turn wakes the agent, and
 * that wake-up reaches the channel as events and as a stored reply; /compact compacts the
 * child's conversation (its compact_boundary answers the API) and a reset starts a new session.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { echoFallback, startFakeMessagesApi } from "../helpers/fake-messages-api.js";
import { waitFor } from "../helpers/wait-for.js";
import { compactThenReset } from "./compact-reset-scenario.js";
import { openEvents, startRudderGateway, type TestGateway } from "./helpers.js";

let gateway: TestGateway | undefined;
let workspace: string | undefined;

afterEach(async () => {
  await gateway?.cleanup();
  if (workspace) rmSync(workspace, { recursive: true, force: true });
});

it("delivers a rudder agent's wake-up after a background task as a reply", async () => {
  const api = await startFakeMessagesApi({
    script: [
      {
        toolUse: {
          name: "Bash",
          input: { command: "sleep 0.5; printf build-ok", run_in_background: true },
        },
      },
      { text: "Started the build." },
      { text: "The build finished: build-ok." },
    ],
    fallback: echoFallback,
  });
  workspace = mkdtempSync(join(tmpdir(), "rudder-engine-"));
  try {
    gateway = await startRudderGateway({
      prefix: "rudder-engine",
      apiUrl: api.url,
      workspace,
    });
    const events = openEvents(`${gateway.url}/api/channels/build/events?token=${gateway.token}`);
    const posted = await gateway.api<{ disposition: string }>(
      "POST",
      "/api/channels/build/messages",
      {
        text: "run the build",
      },
    );
    expect(posted.body.disposition).toBe("started");

    const messages = await waitFor(
      async () => {
        const list = await gateway?.messages("build");
        return list?.some((message) => message.text.includes("build-ok")) ? list : undefined;
      },
      "the wake-up reply",
      30_000,
    );
    expect(messages.map((message) => [message.kind, message.text])).toEqual([
      ["user", "run the build"],
      ["reply", "Started the build."],
      ["reply", "The build finished: build-ok."],
    ]);
    expect(messages[0]?.state).toBe("answered");
    expect(messages[2]?.replyTo).toBeNull();

    await events.waitFor(
      (event) => event.data.type === "task_end" && JSON.stringify(event.data).includes("bg_0001"),
      "the task_end event",
    );
    await events.waitFor(
      (event) => event.data.type === "reply" && JSON.stringify(event.data).includes("build-ok"),
      "the reply event of the wake-up",
    );
    await events.close();
  } finally {
    await api.close();
  }
});

it("compacts a rudder agent's conversation with /compact and resets it to a new session", async () => {
  const api = await startFakeMessagesApi({ fallback: echoFallback });
  workspace = mkdtempSync(join(tmpdir(), "rudder-engine-"));
  try {
    gateway = await startRudderGateway({
      prefix: "rudder-engine-compact",
      apiUrl: api.url,
      workspace,
    });
    expect(await compactThenReset(gateway, api, "kept", 30_000)).toEqual([
      "user",
      "reply",
      "compaction",
      "reset",
      "user",
      "reply",
    ]);
  } finally {
    await api.close();
  }
});

it("tells the model when the gateway's stop of an agent killed its tool, on the next message", async () => {
  const api = await startFakeMessagesApi({
    script: [
      { toolUse: { name: "Bash", input: { command: "exec sleep 60.105" } } },
      { text: "I see the tool was killed." },
    ],
    fallback: echoFallback,
  });
  workspace = mkdtempSync(join(tmpdir(), "rudder-engine-"));
  try {
    // The turn times out while the tool runs: the gateway ends the agent (SIGTERM first).
    gateway = await startRudderGateway({
      prefix: "rudder-engine",
      apiUrl: api.url,
      workspace,
      turnTimeoutMs: 4000,
    });
    const posted = await gateway.api<{ id: string }>("POST", "/api/channels/slow/messages", {
      text: "run the slow tool",
    });
    const started = Date.now();
    await waitFor(
      async () => (await gateway?.messages("slow"))?.[0]?.state === "failed",
      "the timed-out message failed",
      60_000,
    );
    const ended = Date.now();
    await gateway.api("POST", "/api/channels/slow/messages", { text: "what happened?" });
    await waitFor(
      async () => (await gateway?.messages("slow"))?.some((m) => m.text.includes("was killed")),
      "the answer to the next message",
      60_000,
    );
    const request = api.mainRequests().at(-1)?.body.messages as Array<{
      role: string;
      content: Array<{ type: string; content?: string; is_error?: boolean }>;
    }>;
    const result = request[2]?.content[0];
    expect(result).toMatchObject({ type: "tool_result", is_error: true });
    const killed =
      /^Killed: the tool's process tree was killed at (\S+), when the agent process was stopped \(SIGTERM\)/.exec(
        result?.content ?? "",
      );
    expect(killed, result?.content).not.toBeNull();
    const at = new Date(killed?.[1] ?? "").getTime();
    expect(at).toBeGreaterThanOrEqual(started);
    expect(at).toBeLessThanOrEqual(ended);
    expect(posted.status).toBe(202);
  } finally {
    await api.close();
  }
}, 120_000);
