import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import { randomUUID } from "../agent/random-uuid.js";
import { LineSplitter } from "../protocol/line-splitter.js";
import { encodeOutputLine } from "../protocol/line-writer.js";
import type { OutputLine } from "../protocol/output-lines.js";
import { startupErrorResult } from "../protocol/output-lines.js";
import { isPermissionMode, type PermissionMode } from "../protocol/permission-mode.js";
import type { StreamJsonFrontEnd } from "../protocol/stream-json-front-end.js";
import { installSignalCleanup } from "../tools/process-groups.js";
import {
  createAgentSetup,
  maxBudgetUsdFlag,
  maxTurnsFlag,
  setupFlagsFromArgs,
  toolNamesFlag,
} from "./agent-setup.js";
import { booleanFlag, type FlagSpecs, type ParsedArgs, stringFlag } from "./args.js";
import type { CommandIo } from "./command-io.js";
import { readStdinText } from "./stdin.js";
import { openStoredSession } from "./stored-session.js";
import { createStreamJsonFrontEnd } from "./stream-json-front-end.js";

/** Flags of `rudder run` that only the stream-json mode (Claude Code's dialect) uses. */
export const STREAM_JSON_FLAGS: FlagSpecs = {
  "permission-prompt-tool": { type: "string" },
  "permission-mode": { type: "string" },
  "include-partial-messages": { type: "boolean" },
  "include-hook-events": { type: "boolean" },
  "dangerously-skip-permissions": { type: "boolean" },
  "await-initialize": { type: "boolean" },
  "ask-before-waking": { type: "boolean" },
  "send-file-tool": { type: "string" },
};

/**
 * Claude Code flags rudder has no use for that take a separate value, so that
 * `--flag value` skips the value too when unknown flags are ignored.
 */
export const UNKNOWN_FLAGS_WITH_VALUE: ReadonlySet<string> = new Set([
  "--setting-sources",
  "--max-thinking-tokens",
  "--fallback-model",
  "--add-dir",
  "--agents",
  "--agent",
  "--betas",
  "--debug-file",
  "--json-schema",
  "--effort",
  "--plugin-dir",
  "--tools",
  "--resume-session-at",
  "--replay-user-messages",
  "--workload",
]);

function permissionModeOf(args: ParsedArgs, warn: (message: string) => void): PermissionMode {
  if (booleanFlag(args, "dangerously-skip-permissions")) return "bypassPermissions";
  const mode = stringFlag(args, "permission-mode") ?? "default";
  if (isPermissionMode(mode)) return mode;
  warn(`unknown --permission-mode "${mode}"; using default`);
  return "default";
}

/**
 * A host that stopped reading stdout (it died, or closed the pipe: the next write fails with
 * EPIPE) can see nothing more, so rudder stops at once, as on SIGTERM: one line on stderr, the
 * tools' process trees killed and the kill recorded in the transcript (the exit handler), and no
 * further model call. Without this the write's error would end rudder with a stack trace, and
 * only after the turn had gone on.
 */
function stopWhenUnread(io: CommandIo): void {
  if (io.stdout !== process.stdout) return;
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    io.stderr.write(
      `rudder: stopping: the host stopped reading the output (${error.code ?? error.message})\n`,
    );
    process.exit(1);
  });
}

/** Feeds stdin to the front end line by line; resolves when stdin ends. */
function pumpInput(stdin: NodeJS.ReadableStream, frontEnd: StreamJsonFrontEnd): Promise<void> {
  const splitter = new LineSplitter();
  const take = (lines: ReturnType<LineSplitter["push"]>): void => {
    for (const line of lines) {
      if (line.ok) frontEnd.handleLine(line.text);
      else frontEnd.reportInputError(line.error);
    }
  };
  return new Promise((resolveInput) => {
    stdin.on("data", (chunk: Buffer | string) => take(splitter.push(chunk)));
    stdin.on("end", () => {
      take(splitter.end());
      resolveInput();
    });
    stdin.on("error", () => resolveInput());
  });
}

/**
 * `rudder run` speaking Claude Code's stream-json: with `--input-format stream-json` a
 * conversation over stdin until it ends (exit 0), otherwise one prompt (exit 1 when its
 * turn ended in error). Resolves to the exit code.
 */
export async function runStreamJson(args: ParsedArgs, io: CommandIo): Promise<number> {
  const warn = (message: string): void => {
    io.stderr.write(`rudder: ${message}\n`);
  };
  let lastResultFailed = false;
  stopWhenUnread(io);
  const write = (line: OutputLine): void => {
    if (line.type === "result") lastResultFailed = line.is_error === true;
    io.stdout.write(encodeOutputLine(line));
  };
  const fail = (sessionId: string, message: string): number => {
    io.stderr.write(`${message}\n`);
    write(startupErrorResult(sessionId, message));
    return 1;
  };

  const inputFormat = stringFlag(args, "input-format") ?? "text";
  if (inputFormat !== "text" && inputFormat !== "stream-json") {
    warn(`--input-format must be text or stream-json (got "${inputFormat}")`);
    return 2;
  }
  if (stringFlag(args, "output-format") !== "stream-json") {
    warn("--input-format stream-json needs --output-format stream-json");
    return 2;
  }
  if (args.ignored.length > 0) {
    warn(`ignoring options rudder has no use for: ${[...new Set(args.ignored)].join(", ")}`);
  }
  const maxTurns = maxTurnsFlag(args);
  if (maxTurns instanceof Error) {
    warn(maxTurns.message);
    return 2;
  }
  const maxBudgetUsd = maxBudgetUsdFlag(args);
  if (maxBudgetUsd instanceof Error) {
    warn(maxBudgetUsd.message);
    return 2;
  }
  const sendFileTool = stringFlag(args, "send-file-tool");
  if (sendFileTool !== undefined && !/^[1-9]\d*$/.test(sendFileTool)) {
    warn(
      `--send-file-tool takes the largest file in bytes (a whole number), not "${sendFileTool}"`,
    );
    return 2;
  }
  // Hosts of Claude Code key on its tool names and input shapes (`Bash`, `Read {file_path}`).
  const toolNames = toolNamesFlag(args, "claude");
  if (toolNames instanceof Error) {
    warn(toolNames.message);
    return 2;
  }
  const permissionMode = permissionModeOf(args, warn);
  const promptTool = stringFlag(args, "permission-prompt-tool");
  if (promptTool !== undefined && promptTool !== "stdio") {
    warn(`--permission-prompt-tool ${promptTool} is not supported (only stdio); asks are denied`);
  }

  const cwd = stringFlag(args, "cwd");
  let workspace: string;
  try {
    workspace = realpathSync(resolve(cwd ?? process.cwd()));
  } catch {
    return fail(randomUUID(), `workspace folder not found: ${cwd}`);
  }
  const resolved = openStoredSession(args, workspace, io.env, warn);
  if ("error" in resolved) return fail(resolved.sessionId, resolved.error);

  // Hosts written for Claude Code set its retry budget; rudder's own variable wins.
  const env = { ...io.env };
  if (env.RUDDER_MAX_RETRIES === undefined && env.CLAUDE_CODE_MAX_RETRIES !== undefined) {
    env.RUDDER_MAX_RETRIES = env.CLAUDE_CODE_MAX_RETRIES;
  }
  const created = await createAgentSetup(
    {
      ...setupFlagsFromArgs(args),
      cwd: workspace,
      sessionId: resolved.sessionId,
      deferMcpStart: true,
      toolNames,
      ...(sendFileTool === undefined ? {} : { sendFileMaxBytes: Number(sendFileTool) }),
      ...(maxTurns === undefined ? {} : { maxTurns }),
      ...(maxBudgetUsd === undefined ? {} : { maxBudgetUsd }),
    },
    env,
  );
  if (!created.ok) return fail(resolved.sessionId, created.error);
  const { setup } = created;
  for (const note of setup.warnings) warn(note);

  const frontEnd = createStreamJsonFrontEnd(setup, resolved, {
    permissionMode,
    permissionPrompt: promptTool === "stdio",
    includePartialMessages: booleanFlag(args, "include-partial-messages"),
    includeHookEvents: booleanFlag(args, "include-hook-events"),
    awaitInitialize: booleanFlag(args, "await-initialize"),
    askBeforeWaking: booleanFlag(args, "ask-before-waking"),
    env: io.env,
    write,
    warn,
  });
  installSignalCleanup();

  if (inputFormat === "stream-json") {
    if (args.positionals.length > 0)
      warn("a prompt argument is ignored with --input-format stream-json");
    await pumpInput(io.stdin, frontEnd);
    await frontEnd.endInput();
    await setup.close();
    return 0;
  }
  let prompt = args.positionals.join(" ");
  if (prompt.trim() === "" && !io.stdin.isTTY) prompt = await readStdinText(io.stdin);
  if (prompt.trim() === "") {
    warn("no prompt given");
    await setup.close();
    return 2;
  }
  frontEnd.sendUserMessage(prompt);
  await frontEnd.endInput();
  await setup.close();
  return lastResultFailed ? 1 : 0;
}
