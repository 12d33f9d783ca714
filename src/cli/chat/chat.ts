import type { Confirm } from "../../agent/tool-dispatch.js";
import { installSignalCleanup, killAllProcessGroups } from "../../tools/process-groups.js";
import {
  AGENT_FLAGS,
  createAgentSetup,
  DEMO_MODEL_NAME,
  setupFlagsFromArgs,
  toolNamesFlag,
} from "../agent-setup.js";
import { commandArgs, type FlagSpecs } from "../args.js";
import type { CommandIo } from "../command-io.js";
import { SESSION_FLAGS, storedSessionFromFlags } from "../stored-session.js";
import { ChatController } from "./chat-controller.js";
import { ChatInput } from "./chat-input.js";
import { ChatRenderer } from "./chat-renderer.js";
import { ChatScreen } from "./chat-screen.js";

export const CHAT_FLAGS: FlagSpecs = {
  ...AGENT_FLAGS,
  wake: { type: "boolean" },
  ...SESSION_FLAGS,
};

export const CHAT_USAGE = `usage: rudder chat [--model M] [--settings FILE] [--cwd DIR] [--wake]
                   [--resume ID | --continue | --session-id UUID]
                   [--mcp-config FILE|JSON]... [--strict-mcp-config] [--no-project-instructions] [--no-sandbox]
                   [--tool-names rudder|claude]
  The interactive agent in a terminal. Text typed while the agent works joins
  the running turn. The conversation is stored as it goes (rudder sessions
  lists them): --resume ID picks one up again, --continue the latest of this
  folder. --wake starts a turn as soon as a background task ends
  while the agent is idle (otherwise its result joins your next message).
  --model demo runs the offline demo model. Type /help inside for commands.
  Ctrl-C aborts the running turn; at an empty prompt, Ctrl-C twice in a row
  leaves, as do /quit and Ctrl-D. Piped input (no terminal) runs one line at
  a time, and a line answers a pending Allow? question.`;

export interface ChatIo extends CommandIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
}

/** A terminal on both ends, that can draw (not `TERM=dumb`). */
function isInteractive(io: ChatIo): boolean {
  return io.stdin.isTTY === true && io.stdout.isTTY === true && io.env.TERM !== "dumb";
}

/** `rudder chat`: the interactive agent. Resolves to the process exit code. */
export async function chatCommandLine(argv: readonly string[], io: ChatIo): Promise<number> {
  const args = commandArgs("chat", argv, CHAT_FLAGS, CHAT_USAGE, io);
  if (typeof args === "number") return args;
  if (args.positionals.length > 0) {
    io.stderr.write(`rudder chat: takes no prompt argument (use rudder run "<prompt>")\n`);
    return 2;
  }

  const toolNames = toolNamesFlag(args, "rudder");
  if (toolNames instanceof Error) {
    io.stderr.write(`rudder chat: ${toolNames.message}\n`);
    return 2;
  }
  let controller: ChatController | undefined;
  const confirm: Confirm = (request, signal) =>
    controller === undefined ? Promise.resolve(false) : controller.confirm(request, signal);
  const created = await createAgentSetup(
    { ...setupFlagsFromArgs(args), confirm, toolNames },
    io.env,
  );
  if (!created.ok) {
    io.stderr.write(`rudder chat: ${created.error}\n`);
    return 2;
  }
  const { setup } = created;
  for (const warning of setup.warnings) io.stderr.write(`rudder: ${warning}\n`);

  installSignalCleanup();
  // A closed terminal sends SIGHUP; background tasks run in their own process
  // groups, so they would not get it and must be killed here.
  const onHangup = (): void => {
    killAllProcessGroups();
    process.exit(129);
  };
  process.on("SIGHUP", onHangup);

  const session = await storedSessionFromFlags("chat", args, setup, io);
  if (session === undefined) return 1;
  const terminal = isInteractive(io);
  const modelName =
    setup.model.name === DEMO_MODEL_NAME
      ? `${DEMO_MODEL_NAME} (offline and scripted, not a real model)`
      : setup.model.name;
  const resumed =
    session.history.length === 0 ? "" : `  resumed (${session.history.length} messages)`;
  io.stdout.write(
    `rudder chat  model ${modelName}  workspace ${setup.workspace}\n` +
      `session ${session.id}${resumed}\n` +
      `/help for commands, /quit or Ctrl-D to leave\n`,
  );
  const handlers = {
    line: (text: string) => controller?.line(text),
    interrupt: () => controller?.interrupt(),
    end: () => controller?.end(),
    keypress: (name: string | undefined, ctrl: boolean) => controller?.keypress(name, ctrl),
  };
  const input = new ChatInput({ input: io.stdin, output: io.stdout, terminal }, handlers);
  const screen = new ChatScreen({ output: io.stdout, ...(terminal ? { input } : {}) });
  const renderer = new ChatRenderer(screen);
  controller = new ChatController({
    session,
    renderer,
    screen,
    input,
    wake: args.flags.wake === true,
  });
  const code = await controller.finished;
  process.off("SIGHUP", onHangup);
  await setup.close();
  if (session.history.length > 0) {
    io.stdout.write(`resume this conversation with: rudder chat --resume ${session.id}\n`);
  }
  return code;
}
