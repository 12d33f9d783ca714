import { combineOutcomes } from "../agent/combine-outcomes.js";
import { parseLocalCommand } from "../agent/local-command.js";
import { resultLine } from "../protocol/output-lines.js";
import { PermissionDenials } from "../protocol/permission-denials.js";
import { installSignalCleanup } from "../tools/process-groups.js";
import {
  AGENT_FLAGS,
  createAgentSetup,
  maxBudgetUsdFlag,
  maxTurnsFlag,
  setupFlagsFromArgs,
  toolNamesFlag,
} from "./agent-setup.js";
import { commandArgs, type FlagSpecs, stringFlag } from "./args.js";
import type { CommandIo } from "./command-io.js";
import { runStreamJson, STREAM_JSON_FLAGS, UNKNOWN_FLAGS_WITH_VALUE } from "./run-stream-json.js";
import { readStdinText } from "./stdin.js";
import { SESSION_FLAGS, storedSessionFromFlags } from "./stored-session.js";

/** `rudder mcp-channel-tools`, loaded with this module (see main.ts for why). */
export { mcpChannelToolsCommandLine } from "./mcp-channel-tools.js";

export const RUN_FLAGS: FlagSpecs = {
  ...AGENT_FLAGS,
  "output-format": { type: "string" },
  "input-format": { type: "string" },
  print: { type: "boolean", short: "p" },
  verbose: { type: "boolean" },
  "max-turns": { type: "string" },
  "max-budget-usd": { type: "string" },
};

export const RUN_USAGE = `usage: rudder run [--model M] [--settings FILE] [--cwd DIR] [--output-format text|json|stream-json]
         [--resume ID | --continue | --session-id ID] [--mcp-config FILE|JSON]... [--strict-mcp-config]
         [--no-project-instructions] [--no-sandbox] [--tool-names rudder|claude]
         [--max-turns N] [--max-budget-usd N] "<prompt>"
       rudder run -p --input-format stream-json --output-format stream-json --verbose
         [--resume ID | --continue | --session-id ID] [--permission-prompt-tool stdio]
         [--permission-mode default|acceptEdits|bypassPermissions|dontAsk] [--include-partial-messages]
         [--include-hook-events] [--ask-before-waking] [--send-file-tool BYTES]
  Runs one task in the workspace and exits 0, or 1 when the turn ended in error.
  The prompt may also come on stdin. --model demo runs the offline demo model.
  With --input-format stream-json, rudder speaks Claude Code's stream-json on stdin/stdout.
  The built-in tools have rudder's names (bash, read_file, ...) except in stream-json
  mode, which shows Claude Code's (Bash, Read, ...); --tool-names claude|rudder chooses.
  MCP servers (stdio) come from .mcp.json, the settings files' mcpServers and --mcp-config.
  CLAUDE.md (or AGENTS.md) files of the workspace and its parents join the system prompt
  unless --no-project-instructions is given.`;

/** Hosts that drive Claude Code pass flags rudder does not know; in that mode they are skipped. */
function isHeadlessHost(argv: readonly string[]): boolean {
  return argv.some(
    (token) =>
      token === "-p" ||
      token === "--print" ||
      token.startsWith("--input-format") ||
      token === "stream-json" ||
      token.endsWith("=stream-json"),
  );
}

/** `rudder run`: one headless task. Resolves to the process exit code. */
export async function runCommandLine(argv: readonly string[], io: CommandIo): Promise<number> {
  const args = commandArgs(
    "run",
    argv,
    { ...RUN_FLAGS, ...SESSION_FLAGS, ...STREAM_JSON_FLAGS },
    RUN_USAGE,
    io,
    isHeadlessHost(argv) ? { ignoreUnknown: true, unknownWithValue: UNKNOWN_FLAGS_WITH_VALUE } : {},
  );
  if (typeof args === "number") return args;
  const outputFormat = stringFlag(args, "output-format") ?? "text";
  if (outputFormat === "stream-json" || stringFlag(args, "input-format") === "stream-json") {
    return runStreamJson(args, io);
  }
  const streamOnly = Object.keys(STREAM_JSON_FLAGS).filter(
    (name) => args.flags[name] !== undefined,
  );
  if (streamOnly.length > 0) {
    io.stderr.write(`rudder run: ignoring --${streamOnly.join(", --")}: stream-json output only\n`);
  }
  if (outputFormat !== "text" && outputFormat !== "json") {
    io.stderr.write(`rudder run: --output-format must be text or json (got "${outputFormat}")\n`);
    return 2;
  }
  const maxTurns = maxTurnsFlag(args);
  if (maxTurns instanceof Error) {
    io.stderr.write(`rudder run: ${maxTurns.message}\n`);
    return 2;
  }
  const toolNames = toolNamesFlag(args, "rudder");
  if (toolNames instanceof Error) {
    io.stderr.write(`rudder run: ${toolNames.message}\n`);
    return 2;
  }
  const maxBudgetUsd = maxBudgetUsdFlag(args);
  if (maxBudgetUsd instanceof Error) {
    io.stderr.write(`rudder run: ${maxBudgetUsd.message}\n`);
    return 2;
  }
  let prompt = args.positionals.join(" ");
  if (prompt.trim() === "" && !io.stdin.isTTY) prompt = await readStdinText(io.stdin);
  if (prompt.trim() === "") {
    io.stderr.write(`rudder run: no prompt given\n${RUN_USAGE}\n`);
    return 2;
  }

  const created = await createAgentSetup(
    {
      ...setupFlagsFromArgs(args),
      toolNames,
      ...(maxTurns === undefined ? {} : { maxTurns }),
      ...(maxBudgetUsd === undefined ? {} : { maxBudgetUsd }),
    },
    io.env,
  );
  if (!created.ok) {
    io.stderr.write(`rudder run: ${created.error}\n`);
    return 2;
  }
  const { setup } = created;
  for (const warning of setup.warnings) io.stderr.write(`rudder: ${warning}\n`);

  const session = await storedSessionFromFlags("run", args, setup, io);
  if (session === undefined) return 1;
  installSignalCleanup();
  const denials = new PermissionDenials();
  session.subscribe((event) => denials.record(event));
  if (args.flags.verbose === true) {
    session.subscribe((event) => io.stderr.write(`${JSON.stringify(event)}\n`));
  }
  // `/compact [focus]` and `/clear` act on the conversation, as in Claude Code's `-p`.
  const command = parseLocalCommand(prompt);
  let outcome =
    command === undefined
      ? await session.send(prompt)
      : command.name === "clear"
        ? await session.clear()
        : await session.compact(command.focus);
  // Results of background tasks still running are not dropped: wait for
  // them and give the model one more call carrying their notifications.
  for (let woken = await session.wake(); woken !== undefined; woken = await session.wake()) {
    outcome = combineOutcomes(outcome, woken);
  }
  await session.close();
  await setup.close();

  if (outputFormat === "json") {
    // The same object Claude Code prints for `--output-format json`: its result line.
    const line = resultLine(session.id, setup.model.name, outcome, {
      userMessageUuids: [],
      permissionDenials: denials.take(),
    });
    io.stdout.write(`${JSON.stringify(line)}\n`);
  } else {
    io.stdout.write(`${outcome.result}\n`);
  }
  return outcome.isError ? 1 : 0;
}
