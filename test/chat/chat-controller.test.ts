import { existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/agent/events.js";
import { Session } from "../../src/agent/session.js";
import { ChatController, type ChatLineSource } from "../../src/cli/chat/chat-controller.js";
import { CHAT_HELP } from "../../src/cli/chat/chat-format.js";
import { ChatRenderer } from "../../src/cli/chat/chat-renderer.js";
import { ChatScreen } from "../../src/cli/chat/chat-screen.js";
import {
  createScriptedModel,
  type ScriptedStep,
  textReply,
  toolUseReply,
} from "../../src/model/scripted-model.js";
import { emptyRules } from "../../src/permissions/types.js";
import { createDefaultTools } from "../../src/tools/default-tools.js";
import { waitFor } from "../helpers/wait-for.js";

const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

class Transcript extends Writable {
  text = "";
  override _write(chunk: Buffer, _encoding: string, callback: () => void): void {
    this.text += chunk.toString("utf8");
    callback();
  }
}

/** Resolves once `test` holds for an event (or already held for one seen). */
function eventWaiter(session: Session) {
  const seen: AgentEvent[] = [];
  const waiters = new Set<() => void>();
  session.subscribe((event) => {
    seen.push(event);
    for (const waiter of waiters) waiter();
  });
  return (test: (event: AgentEvent) => boolean): Promise<AgentEvent> =>
    new Promise((resolve) => {
      const check = (): void => {
        const found = seen.find(test);
        if (found === undefined) return;
        waiters.delete(check);
        resolve(found);
      };
      waiters.add(check);
      check();
    });
}

function startChat(steps: ScriptedStep[], options: { terminal: boolean; wake?: boolean }) {
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), "rudder-chat-unit-")));
  const model = createScriptedModel(steps);
  const session = new Session({
    model,
    tools: createDefaultTools(),
    rules: emptyRules(),
    workspace,
    confirm: (request, signal) => controller.confirm(request, signal),
  });
  const output = new Transcript();
  const screen = new ChatScreen({ output });
  const renderer = new ChatRenderer(screen);
  const input: ChatLineSource & { closed: boolean; cleared: number; prefilled: string[] } = {
    terminal: options.terminal,
    line: "",
    closed: false,
    cleared: 0,
    prefilled: [],
    clearLine() {
      this.cleared += 1;
    },
    prefill(text: string) {
      this.prefilled.push(text);
    },
    close() {
      this.closed = true;
    },
  };
  const controller: ChatController = new ChatController({
    session,
    renderer,
    screen,
    input,
    wake: options.wake ?? false,
  });
  const waitForEvent = eventWaiter(session);
  cleanups.push(async () => {
    await controller.quit();
    rmSync(workspace, { recursive: true, force: true });
  });
  return { workspace, model, session, output, input, controller, waitForEvent };
}

describe("chat controller, piped input", () => {
  it("runs lines one turn at a time and answers a question with the next line", async () => {
    const chat = startChat(
      [
        textReply("Hello there."),
        toolUseReply("bash", { command: "rm notes.txt" }),
        textReply("Kept it."),
      ],
      { terminal: false },
    );
    writeFileSync(join(chat.workspace, "notes.txt"), "keep\n");
    for (const line of ["hi", "", "remove the notes", "n", "/tasks", "/nope"]) {
      chat.controller.line(line);
    }
    chat.controller.end();
    expect(await chat.controller.finished).toBe(0);
    expect(existsSync(join(chat.workspace, "notes.txt"))).toBe(true);
    expect(chat.output.text).toBe(
      [
        "> hi",
        "Hello there.",
        "> ",
        "> remove the notes",
        "  > bash  rm notes.txt",
        "  bash needs permission: rm deletes or destroys files",
        "  Allow? [y/N] n",
        "  denied: rm deletes or destroys files (not confirmed)",
        "Kept it.",
        "> /tasks",
        "  no background tasks",
        "> /nope",
        "unknown command /nope (try /help)",
        "> ",
        "",
      ].join("\n"),
    );
    expect(chat.input.closed).toBe(true);
  });

  it("y allows the asked command", async () => {
    const chat = startChat(
      [toolUseReply("bash", { command: "rm notes.txt" }), textReply("Gone.")],
      {
        terminal: false,
      },
    );
    writeFileSync(join(chat.workspace, "notes.txt"), "bye\n");
    chat.controller.line("remove it");
    chat.controller.line("y");
    chat.controller.end();
    await chat.controller.finished;
    expect(existsSync(join(chat.workspace, "notes.txt"))).toBe(false);
    expect(chat.output.text).toMatch(/Allow\? \[y\/N\] y\n {2}ok \(\d+ lines?\)\nGone\.\n/);
  });

  it("the end of input answers a pending question with no; /help lists the commands", async () => {
    const chat = startChat(
      [toolUseReply("bash", { command: "rm notes.txt" }), textReply("Fine.")],
      {
        terminal: false,
      },
    );
    writeFileSync(join(chat.workspace, "notes.txt"), "stay\n");
    chat.controller.line("/help");
    chat.controller.line("remove it");
    chat.controller.end();
    await chat.controller.finished;
    expect(existsSync(join(chat.workspace, "notes.txt"))).toBe(true);
    expect(chat.output.text).toContain("/tasks   list background tasks");
    expect(chat.output.text).toContain("  Allow? [y/N] \n  denied: ");
    expect(chat.output.text).toContain("Fine.\n");
  });

  it("with --wake, the end of input waits for background tasks and their wake-up turn", async () => {
    const chat = startChat(
      [
        toolUseReply("bash", { command: "sleep 0.2; echo bg-out", run_in_background: true }),
        textReply("Started."),
        (request) => {
          const last = JSON.stringify(request.messages.at(-1));
          return textReply(last.includes("bg-out") ? "Woke with bg-out." : "no notification");
        },
      ],
      { terminal: false, wake: true },
    );
    chat.controller.line("start it");
    chat.controller.end();
    await chat.controller.finished;
    expect(chat.output.text).toContain("  started bg_0001 in the background\nStarted.\n");
    expect(chat.output.text).toContain("[bg_0001 completed] sleep 0.2; echo bg-out\n");
    expect(chat.output.text).toContain("  (bg_0001 reported to the agent)\nWoke with bg-out.\n");
  });
});

describe("chat controller, terminal input", () => {
  it("with --wake, a finished task wakes the agent while a slower one still runs", async () => {
    const chat = startChat(
      [
        {
          content: [
            {
              type: "tool_use",
              id: "slow",
              name: "bash",
              input: { command: "until [ -e stop ]; do sleep 0.05; done", run_in_background: true },
            },
            {
              type: "tool_use",
              id: "quick",
              name: "bash",
              input: { command: "echo quick-done", run_in_background: true },
            },
          ],
        },
        textReply("Started both."),
        (request) => {
          const last = JSON.stringify(request.messages.at(-1));
          return textReply(last.includes("quick-done") ? "The quick one is done." : "nothing yet");
        },
      ],
      { terminal: true, wake: true },
    );
    chat.controller.line("start two tasks");
    await chat.waitForEvent(
      (event) => event.type === "turn_end" && event.outcome.result === "The quick one is done.",
    );
    expect(chat.session.background.tasks.get("bg_0001")?.status).toBe("running");
    writeFileSync(join(chat.workspace, "stop"), "");
  });

  it("a line entered during a turn steers it", async () => {
    const chat = startChat(
      [
        toolUseReply("bash", { command: "until [ -e go ]; do sleep 0.02; done" }),
        (request) => textReply(`saw: ${JSON.stringify(request.messages.at(-1))}`),
      ],
      { terminal: true },
    );
    chat.controller.line("first");
    await chat.waitForEvent((event) => event.type === "tool_start");
    chat.controller.line("second thoughts");
    writeFileSync(join(chat.workspace, "go"), "");
    await chat.waitForEvent((event) => event.type === "turn_end");
    expect(chat.output.text).toContain("> second thoughts  (steering the running turn)\n");
    expect(chat.output.text).toContain("second thoughts");
    expect(chat.model.requests).toHaveLength(2);
    expect(JSON.stringify(chat.model.requests[1]?.messages)).toContain("second thoughts");
  });

  it("Ctrl-C aborts a running turn and keeps the chat", async () => {
    const chat = startChat([{ hangUntilAborted: true, text: "partial" }, textReply("after")], {
      terminal: true,
    });
    chat.controller.line("go");
    await chat.waitForEvent((event) => event.type === "text_delta");
    chat.controller.interrupt();
    const end = await chat.waitForEvent((event) => event.type === "turn_end");
    expect(end.type === "turn_end" && end.outcome.subtype).toBe("aborted");
    expect(chat.output.text).toContain("partial\n  (interrupted)\n");
    expect(chat.input.closed).toBe(false);
  });

  it("Ctrl-C gives back what was typed to steer the turn but never reached the model", async () => {
    const chat = startChat(
      [
        toolUseReply("bash", { command: "sleep 30" }),
        (request) => textReply(`saw: ${JSON.stringify(request.messages.at(-1))}`),
      ],
      { terminal: true },
    );
    chat.controller.line("first");
    await chat.waitForEvent((event) => event.type === "tool_start");
    chat.controller.line("actually, stop that");
    chat.controller.interrupt();
    const end = await chat.waitForEvent((event) => event.type === "turn_end");
    expect(end.type === "turn_end" && end.outcome.subtype).toBe("aborted");
    await waitFor(() => chat.input.prefilled.length > 0);
    expect(chat.input.prefilled).toEqual(["actually, stop that"]);
    expect(chat.output.text).toContain("was not sent; it is back at the prompt");

    chat.controller.line("something else");
    await chat.waitForEvent((event) => event.type === "turn_end");
    const sent = JSON.stringify(chat.model.requests[1]?.messages.at(-1));
    expect(sent).toContain("something else");
    expect(sent).not.toContain("actually, stop that");
  });

  it("Ctrl-C at an idle prompt clears typed text; twice in a row on an empty one leaves", async () => {
    const chat = startChat([], { terminal: true });
    (chat.input as { line: string }).line = "half typed";
    chat.controller.interrupt();
    expect(chat.input.cleared).toBe(1);
    (chat.input as { line: string }).line = "";
    chat.controller.interrupt();
    expect(chat.output.text).toContain("(press Ctrl-C again to leave, or type /quit)");
    chat.controller.keypress("a", false);
    chat.controller.interrupt();
    expect(chat.input.closed).toBe(false);
    chat.controller.interrupt();
    expect(await chat.controller.finished).toBe(0);
    expect(chat.input.closed).toBe(true);
  });

  it("Ctrl-D while a turn runs aborts it and kills background tasks", async () => {
    const chat = startChat(
      [
        toolUseReply("bash", { command: "sleep 30", run_in_background: true }),
        { hangUntilAborted: true },
      ],
      { terminal: true },
    );
    chat.controller.line("go");
    await chat.waitForEvent((event) => event.type === "task_start");
    chat.controller.end();
    expect(await chat.controller.finished).toBe(0);
    const task = chat.session.background.tasks.get("bg_0001");
    expect(task?.status).toBe("failed");
    expect(chat.session.background.runningCount()).toBe(0);
    expect(chat.output.text).toContain("  (interrupted)\n");
  });
});

describe("chat controller, /compact and /clear", () => {
  it("/compact summarizes the conversation and says how much it freed; /clear starts a new one", async () => {
    const chat = startChat([textReply("first answer"), textReply("SUMMARY"), textReply("after")], {
      terminal: false,
    });
    const firstId = chat.session.id;
    chat.controller.line("hello there");
    chat.controller.line("/compact the greeting");
    chat.controller.line("/clear");
    chat.controller.line("fresh");
    chat.controller.end();
    expect(await chat.controller.finished).toBe(0);
    expect(chat.output.text).toMatch(/context compacted: \d+(\.\d)?k? -> \d+(\.\d)?k? tokens/);
    expect(JSON.stringify(chat.model.requests[1]?.messages)).toContain("focus on: the greeting");
    expect(chat.output.text).toContain(`(the previous one: rudder chat --resume ${firstId})`);
    expect(chat.session.id).not.toBe(firstId);
    expect(JSON.stringify(chat.model.requests[2]?.messages)).not.toContain("hello there");
  });

  it("/help lists /compact and /clear", () => {
    expect(CHAT_HELP).toContain("/compact [focus]");
    expect(CHAT_HELP).toContain("/clear");
  });
});
