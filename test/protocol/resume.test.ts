import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { processesMatching } from "../helpers/process-scan.js";
import { waitFor } from "../helpers/wait-for.js";
import { protocolHarness, STREAM_ARGS } from "./helpers.js";

const harness = protocolHarness();
afterEach(() => harness.cleanup());

const SESSION = "5e55a0e0-1111-4111-8111-000000000001";

describe("sessions are stored as the turn goes and resumed whole", () => {
  it("--session-id names the session; --resume sends the whole history", async () => {
    const api = await harness.api([{ text: "I will remember 42" }, { text: "It was 42" }]);
    const sandbox = harness.sandbox(api);
    const first = harness.start(sandbox, [...STREAM_ARGS, "--session-id", SESSION]);
    first.sendUser("remember 42");
    const result = await first.waitForResult();
    first.end();
    expect(await first.exited).toBe(0);
    expect(result.session_id).toBe(SESSION);
    expect(first.ofType("system", "init")[0]?.session_id).toBe(SESSION);
    expect(
      existsSync(join(sandbox.env.RUDDER_HOME as string, "sessions", `${SESSION}.jsonl`)),
    ).toBe(true);

    const second = harness.start(sandbox, [...STREAM_ARGS, `--resume=${SESSION}`]);
    second.sendUser("which number?");
    const resumed = await second.waitForResult();
    second.end();
    expect(await second.exited).toBe(0);
    expect(resumed.session_id).toBe(SESSION);
    expect(api.mainRequests()[1]?.body.messages).toEqual([
      { role: "user", content: "remember 42" },
      { role: "assistant", content: [{ type: "text", text: "I will remember 42" }] },
      { role: "user", content: "which number?" },
    ]);
  });

  it("a SIGKILLed process keeps what was sent before the model call in flight", async () => {
    const api = await harness.api([
      { toolUse: { name: "Bash", input: { command: "echo step-one" } } },
      { hangUntilAborted: true, text: "never finished" },
      { text: "resumed fine" },
    ]);
    const sandbox = harness.sandbox(api);
    const first = harness.start(sandbox, [...STREAM_ARGS, "--session-id", SESSION]);
    first.sendUser("do the first step");
    await first.waitFor((line) => line.type === "user");
    await api.waitForMainRequests(2);
    first.kill("SIGKILL");
    await first.exited;

    const second = harness.start(sandbox, [...STREAM_ARGS, "--resume", SESSION]);
    second.sendUser("continue please");
    const result = await second.waitForResult();
    second.end();
    expect(await second.exited).toBe(0);
    expect(result).toMatchObject({ is_error: false, result: "resumed fine" });
    const messages = api.mainRequests()[2]?.body.messages;
    expect(messages).toHaveLength(3);
    expect(messages[0]).toEqual({ role: "user", content: "do the first step" });
    expect(messages[1].content[0]).toMatchObject({ type: "tool_use", name: "Bash" });
    expect(messages[2].content[0]).toMatchObject({ type: "tool_result", content: "step-one\n" });
    expect(messages[2].content.at(-1)).toMatchObject({ type: "text", text: "continue please" });
  });

  it("a message delivered again after a SIGKILL appears once in the model's prompt", async () => {
    const api = await harness.api([
      { toolUse: { name: "Bash", input: { command: "echo step-one" } } },
      { hangUntilAborted: true, text: "never finished" },
      { text: "answered once" },
    ]);
    const sandbox = harness.sandbox(api);
    const first = harness.start(sandbox, [...STREAM_ARGS, "--session-id", SESSION]);
    first.sendUser("the question");
    first.sendUser("a steer");
    await api.waitForMainRequests(2);
    first.kill("SIGKILL");
    await first.exited;

    // As the gateway does after its restart: every unanswered message again, in order.
    const second = harness.start(sandbox, [...STREAM_ARGS, "--resume", SESSION]);
    second.sendUser("the question");
    second.sendUser("a steer");
    const result = await second.waitForResult();
    second.end();
    expect(await second.exited).toBe(0);
    expect(result).toMatchObject({ is_error: false, result: "answered once" });
    const prompt = JSON.stringify(api.mainRequests()[2]?.body.messages);
    expect(prompt.split("the question")).toHaveLength(2);
    expect(prompt.split("a steer")).toHaveLength(2);
    // A message that is new after the restart is the model's, as ever.
    const third = harness.start(sandbox, [...STREAM_ARGS, "--resume", SESSION]);
    third.sendUser("the question");
    await third.waitForResult();
    third.end();
    await third.exited;
    const asked = JSON.stringify(api.mainRequests()[3]?.body.messages);
    expect(asked.split("the question")).toHaveLength(3);
  });

  it("a process killed while a tool ran resumes with that tool's result marked unknown", async () => {
    const api = await harness.api([
      { toolUse: { name: "Bash", input: { command: "exec sleep 60.102" } } },
      { text: "recovered" },
    ]);
    const sandbox = harness.sandbox(api);
    const first = harness.start(sandbox, [...STREAM_ARGS, "--session-id", SESSION]);
    first.sendUser("start the long tool");
    await waitFor(() => processesMatching("sleep 60.102").length > 0);
    first.kill("SIGKILL");
    await first.exited;
    // The sandbox's command dies with rudder (die-with-parent, its own PID namespace).
    await waitFor(() => processesMatching("sleep 60.102").length === 0);

    const second = harness.start(sandbox, [...STREAM_ARGS, "--resume", SESSION]);
    second.sendUser("what happened?");
    await second.waitForResult();
    second.end();
    expect(await second.exited).toBe(0);
    const messages = api.mainRequests()[1]?.body.messages;
    expect(messages).toHaveLength(3);
    expect(messages[2].content[0]).toMatchObject({ type: "tool_result", is_error: true });
    const told = messages[2].content[0].content as string;
    expect(told).toMatch(
      /^Result unknown: the agent process ended \(its last record is from \d{4}-/,
    );
    expect(told).toContain("may have finished, run in part, or been killed");
    expect(told).not.toContain("Interrupted");
    expect(messages[2].content.at(-1)).toMatchObject({ type: "text", text: "what happened?" });
  });

  it("a process stopped (SIGTERM) while a tool ran resumes with the time the tool was killed", async () => {
    const api = await harness.api([
      { toolUse: { name: "Bash", input: { command: "exec sleep 60.103" } } },
      { text: "recovered" },
    ]);
    const sandbox = harness.sandbox(api);
    const first = harness.start(sandbox, [...STREAM_ARGS, "--session-id", SESSION]);
    first.sendUser("start the long tool");
    await waitFor(() => processesMatching("sleep 60.103").length > 0);
    const before = new Date();
    first.kill("SIGTERM");
    expect(await first.exited).toBe(143);
    const after = new Date();
    await waitFor(() => processesMatching("sleep 60.103").length === 0);

    const second = harness.start(sandbox, [...STREAM_ARGS, "--resume", SESSION]);
    second.sendUser("what happened?");
    await second.waitForResult();
    second.end();
    expect(await second.exited).toBe(0);
    const messages = api.mainRequests()[1]?.body.messages;
    expect(messages).toHaveLength(3);
    expect(messages[2].content[0]).toMatchObject({ type: "tool_result", is_error: true });
    const told = messages[2].content[0].content as string;
    const killed =
      /^Killed: the tool's process tree was killed at (\S+), when the agent process was stopped \(SIGTERM\)/.exec(
        told,
      );
    expect(killed, told).not.toBeNull();
    const at = new Date(killed?.[1] ?? "");
    expect(at.getTime()).toBeGreaterThanOrEqual(before.getTime());
    expect(at.getTime()).toBeLessThanOrEqual(after.getTime());
    expect(told).not.toContain("unknown");
    expect(messages[2].content.at(-1)).toMatchObject({ type: "text", text: "what happened?" });
  });

  it("--resume of an unknown session is an error result and exit 1", async () => {
    const api = await harness.api();
    const unknown = "0badc0de-0000-4000-8000-000000000000";
    const rudder = harness.start(harness.sandbox(api), [...STREAM_ARGS, "--resume", unknown]);
    rudder.end();
    expect(await rudder.exited).toBe(1);
    const result = rudder.ofType("result")[0];
    expect(result).toMatchObject({ is_error: true, session_id: unknown });
    expect(result?.errors).toEqual([`No conversation found with session ID: ${unknown}`]);
    expect(rudder.stderr).toContain(`No conversation found with session ID: ${unknown}`);
    expect(api.requests).toHaveLength(0);
  });

  it("--session-id refuses an id already in use; --continue picks the latest session here", async () => {
    const api = await harness.api([{ text: "first answer" }, { text: "continued" }]);
    const sandbox = harness.sandbox(api);
    const first = harness.start(sandbox, [...STREAM_ARGS, "--session-id", SESSION]);
    first.sendUser("hello");
    await first.waitForResult();
    first.end();
    expect(await first.exited).toBe(0);

    const clash = harness.start(sandbox, [...STREAM_ARGS, "--session-id", SESSION]);
    clash.end();
    expect(await clash.exited).toBe(1);
    expect(clash.stderr).toContain("already in use");

    const continued = harness.start(sandbox, [...STREAM_ARGS, "--continue"]);
    continued.sendUser("again");
    const result = await continued.waitForResult();
    continued.end();
    expect(await continued.exited).toBe(0);
    expect(result.session_id).toBe(SESSION);
    expect(api.mainRequests()[1]?.body.messages).toHaveLength(3);
  });
});
