import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type FakeMessagesApi,
  lastToolResults,
  lastUserText,
} from "../helpers/fake-messages-api.js";
import { isAlive } from "../helpers/process-state.js";
import { waitFor } from "../helpers/wait-for.js";
import {
  atIdlePrompt,
  type ChatUnderTmux,
  commandLine,
  screenLines,
  startChatUnderTmux,
  type TmuxDriver,
} from "./tmux-driver.js";

/** The pids of `pids` still alive, with their command lines. */
function aliveOf(pids: Set<number>): string {
  return [...pids]
    .filter((pid) => isAlive(pid))
    .map((pid) => `${pid} ${commandLine(pid)}`)
    .join(", ");
}
/**
 * `rudder chat` in a real terminal (tmux), against the fake Messages API.
 * The steps run in order on one chat, as a person would use it.
 */
describe("rudder chat in a terminal", () => {
  let chat: ChatUnderTmux;
  let api: FakeMessagesApi;
  let workspace: string;
  let tmux: TmuxDriver;
  let seen: Set<number>;
  const remember = (): void => chat.remember();

  // The user asks about rm (in the sandbox, only ask rules and the deny list stop a command).
  const settingsFolder = mkdtempSync(join(tmpdir(), "rudder-chat-settings-"));
  const settings = join(settingsFolder, "settings.json");
  writeFileSync(settings, JSON.stringify({ permissions: { ask: ["Bash(rm:*)"] } }));

  beforeAll(async () => {
    chat = await startChatUnderTmux("chat", ["--settings", settings]);
    ({ api, workspace, tmux, seen } = chat);
  });

  afterAll(async () => {
    await chat?.close();
    rmSync(settingsFolder, { recursive: true, force: true });
  });

  it("starts at a prompt, and a blank line only re-prompts", async () => {
    await tmux.waitFor("the banner and the prompt", (screen) => {
      return screen.includes("rudder chat") && atIdlePrompt(screen);
    });
    await tmux.type("");
    await tmux.waitFor("two prompts", (screen) => {
      return screenLines(screen).filter((line) => line === ">").length >= 2;
    });
    expect(await tmux.exitStatus()).toBeUndefined();
    expect(api.mainRequests()).toHaveLength(0);
  });

  it("streams text as it arrives, and Ctrl-C aborts the turn and gives the prompt back", async () => {
    api.push({ hangUntilAborted: true, text: "Partial words arrive" });
    await tmux.type("say something");
    // The reply is still open: whatever shows was streamed.
    await tmux.waitForText("Partial words arrive");
    await tmux.key("C-c");
    const screen = await tmux.waitFor(
      "the prompt after the abort",
      (text) => atIdlePrompt(text) && text.includes("(interrupted)"),
    );
    expect(screenLines(screen).slice(-4)).toEqual([
      "> say something",
      "Partial words arrive",
      "  (interrupted)",
      ">",
    ]);
    expect(await tmux.exitStatus()).toBeUndefined();
  });

  it("shows a tool call and its outcome on one line each", async () => {
    api.push(
      { toolUse: { name: "bash", input: { command: "printf 'one\\ntwo\\nthree\\n'" } } },
      { text: "Printed three lines." },
    );
    await tmux.type("print three lines");
    const screen = await tmux.waitFor(
      "the reply after the tool",
      (text) => text.includes("Printed three lines.") && atIdlePrompt(text),
    );
    expect(screen).toContain("  > bash  printf 'one\\ntwo\\nthree\\n'");
    expect(screen).toContain("  ok (3 lines)");
  });

  it("asks Allow? [y/N] for rm, and n denies it", async () => {
    writeFileSync(join(workspace, "notes.txt"), "keep me\n");
    api.push(
      { toolUse: { name: "bash", input: { command: "rm notes.txt" } } },
      { text: "Left the file alone." },
    );
    await tmux.type("delete the notes");
    await tmux.waitFor("the question", (screen) =>
      (screenLines(screen).at(-1) ?? "").includes("Allow? [y/N]"),
    );
    await tmux.type("n");
    const screen = await tmux.waitFor(
      "the reply after the denial",
      (text) => text.includes("Left the file alone.") && atIdlePrompt(text),
    );
    expect(screen).toContain("  > bash  rm notes.txt");
    expect(screen).toMatch(/ {2}denied: /);
    expect(existsSync(join(workspace, "notes.txt"))).toBe(true);
    const results = lastToolResults(api.mainRequests().at(-1) as never);
    expect(results[0]?.is_error).toBe(true);
    expect(String(results[0]?.content)).toContain("Permission denied");
  });

  it("announces a finished background task, lists tasks, delivers it at the next prompt", async () => {
    api.push(
      {
        toolUse: [
          {
            name: "bash",
            input: { command: "sleep 0.3; echo short-done", run_in_background: true },
          },
          { name: "bash", input: { command: "sleep 300", run_in_background: true } },
        ],
      },
      { text: "Two tasks started." },
    );
    await tmux.type("start two tasks");
    await tmux.waitFor(
      "the turn to end",
      (text) => text.includes("Two tasks started.") && atIdlePrompt(text),
    );
    remember();
    expect([...seen].some((pid) => commandLine(pid).includes("sleep 300"))).toBe(true);
    // The notice comes on its own, with the agent idle and nothing typed.
    await tmux.waitForText(
      "[bg_0001 completed] sleep 0.3; echo short-done\n  (the agent gets this with your next message",
    );
    await tmux.waitFor("the prompt after the notice", atIdlePrompt);

    await tmux.type("/tasks");
    const listing = await tmux.waitFor("the task list", (text) => /bg_0002 +running/.test(text));
    expect(listing).toMatch(/bg_0001 +completed/);
    expect(listing).toContain("sleep 300");

    const before = api.mainRequests().length;
    api.push({ text: "Noted the result." });
    await tmux.type("anything new?");
    await tmux.waitForText("Noted the result.");
    const request = api.mainRequests()[before];
    expect(JSON.stringify(request?.body.messages)).toContain("<task_id>bg_0001</task_id>");
    expect(JSON.stringify(request?.body.messages)).toContain("short-done");
    await tmux.waitFor("the prompt", atIdlePrompt);
  });

  it("shows a spinner while a tool works, and typed text steers the running turn", async () => {
    api.push(
      {
        toolUse: {
          name: "bash",
          input: { command: "until [ -e release ]; do sleep 0.05; done; echo released" },
        },
      },
      { reply: (request) => ({ text: `Steered by: ${lastUserText(request)}` }) },
    );
    await tmux.type("wait for the release");
    await tmux.waitFor("the spinner", (screen) => /running bash \d+\.\ds/.test(screen));
    remember();
    await tmux.type("and also say hello");
    await tmux.waitForText("> and also say hello  (steering the running turn)");
    writeFileSync(join(workspace, "release"), "");
    const screen = await tmux.waitFor(
      "the steered reply",
      (text) => text.includes("Steered by: and also say hello") && atIdlePrompt(text),
    );
    expect(screen).toContain("  ok (1 line)");
  });

  it("Ctrl-C during a tool kills it and keeps the chat", async () => {
    api.push({ toolUse: { name: "bash", input: { command: "sleep 400" } } });
    await tmux.type("sleep a long time");
    await tmux.waitFor("the spinner", (screen) => /running bash \d+\.\ds/.test(screen));
    remember();
    const sleeper = await waitFor(() => {
      remember();
      return [...seen].find((pid) => commandLine(pid).includes("sleep 400"));
    }, "the sleep 400 process");
    await tmux.key("C-c");
    await tmux.waitFor(
      "the prompt after the abort",
      (text) => atIdlePrompt(text) && screenLines(text).includes("  (interrupted)"),
    );
    await waitFor(() => !isAlive(sleeper), "the sleep 400 process to be gone", 5000);
    expect(await tmux.exitStatus()).toBeUndefined();
  });

  it("Ctrl-C puts unsent steering text back at the prompt, to edit or send", async () => {
    api.push(
      { toolUse: { name: "bash", input: { command: "sleep 300" } } },
      { reply: (request) => ({ text: `Got: ${lastUserText(request)}` }) },
    );
    await tmux.type("sleep for a while");
    await tmux.waitFor("the spinner", (screen) => /running bash \d+\.\ds/.test(screen));
    await tmux.type("never mind");
    await tmux.waitForText("> never mind  (steering the running turn)");
    await tmux.key("C-c");
    await tmux.waitFor(
      "the text back at the prompt",
      (text) =>
        text.includes("it is back at the prompt") && screenLines(text).at(-1) === "> never mind",
    );
    await tmux.type(", and say hi");
    await tmux.waitFor(
      "the reply to the edited line",
      (text) => text.includes("Got: ") && atIdlePrompt(text),
    );
    // The model reads the interrupt, then the edited line, once.
    const last = api.mainRequests().at(-1);
    expect(last && lastUserText(last)).toBe(
      "[Request interrupted by user for tool use]\nnever mind, and say hi",
    );
  });

  it("/quit leaves with status 0 and no process left behind", async () => {
    remember();
    await tmux.type("/quit");
    const status = await tmux.waitForExit();
    expect(status).toBe(0);
    expect(seen.size).toBeGreaterThan(0);
    // Killed groups get a short grace period before SIGKILL.
    await waitFor(
      () => ![...seen].some((pid) => isAlive(pid)),
      () => `no process left; alive: ${aliveOf(seen)}`,
      5000,
    );
  });
});

describe("rudder chat --wake in a terminal", () => {
  let chat: ChatUnderTmux;

  beforeAll(async () => {
    chat = await startChatUnderTmux("wake", ["--wake"]);
  });

  afterAll(async () => {
    await chat?.close();
  });

  it("wakes the idle agent when a background task ends; Ctrl-D leaves", async () => {
    const { api, tmux } = chat;
    await tmux.waitFor("the prompt", atIdlePrompt);
    api.push(
      {
        toolUse: {
          name: "bash",
          input: { command: "sleep 0.3; echo wake-output", run_in_background: true },
        },
      },
      { text: "Waiting for it." },
      {
        reply: (request) => ({
          text: JSON.stringify(request.body.messages).includes("wake-output")
            ? "Woken with the result."
            : "Woken without it.",
        }),
      },
    );
    await tmux.type("start and wait");
    await tmux.waitForText("Waiting for it.");
    chat.remember();
    const screen = await tmux.waitFor(
      "the wake-up turn",
      (text) => text.includes("Woken with the result.") && atIdlePrompt(text),
    );
    expect(screen).toContain("[bg_0001 completed] sleep 0.3; echo wake-output");
    expect(screen).toContain("  (bg_0001 reported to the agent)");
    expect(api.mainRequests()).toHaveLength(3);

    await tmux.key("C-d");
    expect(await tmux.waitForExit()).toBe(0);
    // Killed as the chat exits (its sandbox's processes by SIGKILL), each is gone a moment later.
    await waitFor(() => [...chat.seen].every((pid) => !isAlive(pid)));
    expect([...chat.seen].filter((pid) => isAlive(pid))).toEqual([]);
  });
});

describe("rudder chat when its terminal goes away", () => {
  let chat: ChatUnderTmux;

  beforeAll(async () => {
    chat = await startChatUnderTmux("hangup", []);
  });

  afterAll(async () => {
    await chat?.close();
  });

  it("kills its background tasks on SIGHUP", async () => {
    const { api, tmux } = chat;
    await tmux.waitFor("the prompt", atIdlePrompt);
    api.push(
      { toolUse: { name: "bash", input: { command: "sleep 500", run_in_background: true } } },
      { text: "Sleeping in the background." },
    );
    await tmux.type("sleep in the background");
    await tmux.waitFor(
      "the turn to end",
      (text) => text.includes("Sleeping in the background.") && atIdlePrompt(text),
    );
    // The task starts once the sandbox is ready, which may be just after the turn's end.
    await waitFor(
      () => {
        chat.remember();
        return [...chat.seen].some((pid) => commandLine(pid).includes("sleep 500"));
      },
      "the sleep 500 task",
      5000,
    );
    // Closing the terminal hangs up its processes.
    await tmux.kill();
    await waitFor(
      () => ![...chat.seen].some((pid) => isAlive(pid)),
      () => `no process left; alive: ${aliveOf(chat.seen)}`,
      5000,
    );
  });
});
