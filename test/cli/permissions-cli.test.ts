/**
 * `rudder permissions list|allow|deny` answers a channel's agent from a
 * terminal: the gateway runs rudder on the fake Messages API, the model runs
 * `rm`, which rudder's gate asks about, and the CLI decides.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startRudderGateway, type TestGateway } from "../gateway/helpers.js";
import {
  type FakeMessagesApi,
  lastToolResults,
  startFakeMessagesApi,
} from "../helpers/fake-messages-api.js";
import { startRudder } from "../helpers/rudder-cli.js";
import { waitFor } from "../helpers/wait-for.js";

let api: FakeMessagesApi;
let gateway: TestGateway;
let workspace: string;

beforeAll(async () => {
  api = await startFakeMessagesApi({
    fallback: (request) => ({
      text: `tool said: ${JSON.stringify(lastToolResults(request)[0]?.content ?? "")}`,
    }),
  });
  workspace = mkdtempSync(join(tmpdir(), "rudder-permissions-cli-"));
  // The user asks about rm (in the sandbox, only ask rules and the deny list stop a command).
  mkdirSync(join(workspace, ".rudder"), { recursive: true });
  writeFileSync(
    join(workspace, ".rudder", "settings.json"),
    '{"permissions":{"ask":["Bash(rm:*)"]}}',
  );
  gateway = await startRudderGateway({
    prefix: "permissions-cli",
    apiUrl: api.url,
    workspace,
  });
});

afterAll(async () => {
  await gateway?.cleanup();
  await api?.close();
  rmSync(workspace, { recursive: true, force: true });
});

async function permissions(args: string[]) {
  const run = startRudder(
    ["permissions", ...args, "--url", gateway.url, "--data", gateway.dataDir],
    {
      cwd: workspace,
      env: { PATH: process.env.PATH, HOME: workspace },
    },
  );
  const { code } = await run.exited;
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

async function pendingRequestId(channel: string): Promise<string> {
  return waitFor(async () => {
    const listed = await permissions(["list", channel]);
    return /^(\S+)\tBash\trm /m.exec(listed.stdout)?.[1];
  }, `a pending request on ${channel}`);
}

async function replyOn(channel: string): Promise<string> {
  return waitFor(async () => {
    const messages = await gateway.messages(channel);
    return messages.find((message) => message.kind === "reply")?.text;
  }, `the reply on ${channel}`);
}

it("denies with a message the agent reads, and allows", async () => {
  const kept = join(workspace, "kept.txt");
  writeFileSync(kept, "precious");
  api.push({ toolUse: { name: "Bash", input: { command: "rm kept.txt" } } });
  await gateway.api("POST", "/api/channels/deny-me/messages", { text: "delete kept.txt" });
  const denied = await pendingRequestId("deny-me");
  const deny = await permissions(["deny", "deny-me", denied, "move it to trash instead"]);
  expect(deny).toMatchObject({ code: 0, stdout: `denied ${denied}\n` });
  expect(await replyOn("deny-me")).toContain("move it to trash instead");
  expect(existsSync(kept)).toBe(true);

  const gone = join(workspace, "gone.txt");
  writeFileSync(gone, "bye");
  api.push({ toolUse: { name: "Bash", input: { command: "rm gone.txt" } } });
  await gateway.api("POST", "/api/channels/allow-me/messages", { text: "delete gone.txt" });
  const allowed = await pendingRequestId("allow-me");
  expect((await permissions(["allow", "allow-me", allowed])).code).toBe(0);
  await replyOn("allow-me");
  expect(existsSync(gone)).toBe(false);

  const again = await permissions(["allow", "allow-me", allowed]);
  expect(again.code).toBe(1);
  expect(again.stderr.trim().split("\n")).toHaveLength(1);
  expect((await permissions(["list", "allow-me"])).stdout).toBe("no permission requests waiting\n");
  expect((await permissions(["approve", "allow-me"])).code).toBe(2);
});
