import * as v from "valibot";
import { sandboxFailureNote } from "../sandbox/failure-note.js";
import type { Sandbox } from "../sandbox/sandbox.js";
import { toolJsonSchema } from "./json-schema.js";
import { DEFAULT_MAX_OUTPUT_CHARS, runCommand } from "./run-command.js";
import type { Tool, ToolResult } from "./types.js";

export const DEFAULT_BASH_TIMEOUT_MS = 120_000;
export const MAX_BASH_TIMEOUT_MS = 600_000;

const bashInput = v.object({
  command: v.pipe(
    v.string(),
    v.minLength(1),
    v.description("The shell command to run, as one bash command line."),
  ),
  run_in_background: v.optional(
    v.pipe(
      v.boolean(),
      v.description(
        "Set to true to start the command in the background and continue at once; " +
          "you are notified with its output when it finishes.",
      ),
    ),
  ),
  timeout: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.gtValue(0),
      v.maxValue(MAX_BASH_TIMEOUT_MS),
      v.description(
        `Timeout in milliseconds (default ${DEFAULT_BASH_TIMEOUT_MS}, at most ${MAX_BASH_TIMEOUT_MS}).`,
      ),
    ),
  ),
});

export type BashInput = v.InferOutput<typeof bashInput>;

const description = [
  "Run a bash command in the workspace directory and return its combined stdout and stderr.",
  "",
  `- Each call starts a fresh shell: \`cd\` and exported variables do not carry over, so chain steps with \`&&\` in one command.`,
  "- stdin is closed; do not run commands that wait for input (use non-interactive flags such as `-y`).",
  `- The command is stopped after the timeout (default ${DEFAULT_BASH_TIMEOUT_MS / 1000} s, \`timeout\` up to ${MAX_BASH_TIMEOUT_MS / 1000} s).`,
  "- When the command returns, everything it started is killed, including processes sent to the background with `&` or `nohup`.",
  "  For servers, watchers or long builds, set `run_in_background: true` instead: the call returns a task id at once,",
  "  and the output arrives as a task notification when the command ends.",
  `- Output over ${DEFAULT_MAX_OUTPUT_CHARS} characters keeps its beginning and end with a marker saying how much was cut;`,
  "  filter large output with grep, head or tail.",
  "- A non-zero exit status is reported as an error together with the output.",
  "- Commands that delete or overwrite (rm, chmod -R, git reset --hard, ...) may need the user's approval,",
  "  and some (sudo, shutdown, mkfs, dd, writes to disks) are always refused.",
  "- Prefer read_file, write_file, edit_file and glob for file work: they are exact and need no quoting.",
].join("\n");

export interface BashToolOptions {
  /** Confines every command (bubblewrap); without it commands run as they are. */
  sandbox?: Sandbox;
}

/**
 * The `bash` tool. `run_in_background` is routed by the loop; here every call
 * runs in the foreground. A failed sandboxed command whose output shows the
 * sandbox stopped it gets a note saying what the sandbox allows.
 */
export function createBashTool(options: BashToolOptions = {}): Tool<BashInput> {
  const sandbox = options.sandbox;
  return {
    name: "bash",
    description,
    inputSchema: bashInput,
    get jsonSchema() {
      return toolJsonSchema(bashInput);
    },
    ...(sandbox === undefined ? {} : { warm: () => sandbox.warm() }),
    async execute(input, context): Promise<ToolResult> {
      const timeoutMs = Math.min(input.timeout ?? DEFAULT_BASH_TIMEOUT_MS, MAX_BASH_TIMEOUT_MS);
      const result = await runCommand(input.command, {
        cwd: context.workspace,
        timeoutMs,
        signal: context.signal,
        maxOutputChars: DEFAULT_MAX_OUTPUT_CHARS,
        ...(sandbox === undefined ? {} : { sandbox }),
      });
      const note =
        result.sandboxed && result.exitCode !== 0 && sandbox !== undefined
          ? sandboxFailureNote(result.output, sandbox.policy)
          : undefined;
      const text = result.output.length > 0 ? result.output : "(no output)";
      const output = note === undefined ? text : `${text}\n${note}`;
      if (result.timedOut) {
        return error(`Error: command timed out after ${formatSeconds(timeoutMs)} s\n${output}`);
      }
      if (result.aborted) return error(`Error: command was cancelled\n${output}`);
      if (result.exitCode === 0) {
        return {
          content: output,
          isError: false,
          details: { tool: "bash", output: result.output, interrupted: false },
        };
      }
      if (result.exitCode !== null) {
        return error(`Error: command exited with status ${result.exitCode}\n${output}`);
      }
      if (result.signal !== null) {
        return error(`Error: command was killed by ${result.signal}\n${output}`);
      }
      return error(`Error: ${output}`);
    },
  };
}

function error(content: string): ToolResult {
  return { content, isError: true };
}

function formatSeconds(milliseconds: number): string {
  const seconds = milliseconds / 1000;
  return Number.isInteger(seconds) ? String(seconds) : seconds.toFixed(1);
}
