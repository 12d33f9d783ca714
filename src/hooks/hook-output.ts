import * as v from "valibot";
import type { HookProcessResult } from "./hook-process.js";
import type { HookEventName, HookOutcome } from "./types.js";

/** A JSON object, not an array: valibot's `object` and `record` accept arrays too. */
function jsonObject<const Schema extends v.GenericSchema<Record<string, unknown>, unknown>>(
  schema: Schema,
) {
  return v.pipe(
    v.custom<Record<string, unknown>>(
      (value) => typeof value === "object" && value !== null && !Array.isArray(value),
      (issue) => `Invalid type: Expected Object but received ${issue.received}`,
    ),
    schema,
  );
}

/** Claude Code's JSON answer on stdout; unknown fields are ignored. */
const hookJsonOutputSchema = v.object({
  continue: v.optional(v.boolean()),
  stopReason: v.optional(v.string()),
  suppressOutput: v.optional(v.boolean()),
  systemMessage: v.optional(v.string()),
  decision: v.optional(v.picklist(["approve", "block"])),
  reason: v.optional(v.string()),
  hookSpecificOutput: v.optional(
    jsonObject(
      v.object({
        hookEventName: v.optional(v.string()),
        // "defer" (Agent SDK hooks): no decision, the permission rules decide.
        permissionDecision: v.optional(v.picklist(["allow", "deny", "ask", "defer"])),
        permissionDecisionReason: v.optional(v.string()),
        updatedInput: v.optional(jsonObject(v.record(v.string(), v.unknown()))),
        additionalContext: v.optional(v.string()),
      }),
    ),
  ),
});

type HookJsonOutput = v.InferOutput<typeof hookJsonOutputSchema>;

/** The last characters of stderr worth showing in a warning. */
const WARNING_TAIL_CHARS = 500;

/**
 * Turns one command hook's exit status and output into its part of the
 * outcome, following Claude Code: exit 2 blocks with stderr as the reason;
 * exit 0 may carry a JSON answer (or, for UserPromptSubmit, plain text that
 * becomes context); any other status, a timeout or bad JSON is a warning.
 */
export function interpretHookResult(
  event: HookEventName,
  label: string,
  timeoutSeconds: number,
  result: HookProcessResult,
): Partial<HookOutcome> {
  const name = `hook "${label}"`;
  if (result.spawnError !== undefined) {
    return { warnings: [`${name} could not start: ${result.spawnError.message}`] };
  }
  if (result.cause === "timeout") {
    return { warnings: [`${name} timed out after ${timeoutSeconds}s`] };
  }
  if (result.cause === "aborted") return { warnings: [`${name} was cancelled`] };
  const stderr = result.stderrTail.trim();
  if (result.exitCode === 2) {
    return { blocked: true, reason: stderr === "" ? `${name} exited with status 2` : stderr };
  }
  if (result.exitCode !== 0) {
    const status =
      result.exitCode === undefined ? "was killed" : `exited with status ${result.exitCode}`;
    const tail = stderr.slice(-WARNING_TAIL_CHARS);
    return { warnings: [`${name} ${status}${tail === "" ? "" : `: ${tail}`}`] };
  }
  const stdout = result.stdout.trim();
  if (!stdout.startsWith("{")) {
    return event === "UserPromptSubmit" && stdout !== "" ? { additionalContext: [stdout] } : {};
  }
  let json: unknown;
  try {
    json = JSON.parse(stdout);
  } catch (error) {
    const detail = result.stdoutTruncated ? "output too large" : (error as Error).message;
    return { warnings: [`${name} printed invalid JSON on stdout (${detail})`] };
  }
  const read = interpretHookJson(event, name, json);
  return read.ok
    ? read.outcome
    : { warnings: [`${name} printed JSON of the wrong shape (${read.problem})`] };
}

/**
 * A hook's JSON answer (a command hook's stdout, or what an Agent SDK host's
 * hook callback returned) as its part of the outcome, with tool input in the
 * spelling the hook used; `problem` says where the shape is wrong.
 */
export function interpretHookJson(
  event: HookEventName,
  name: string,
  json: unknown,
): { ok: true; outcome: Partial<HookOutcome> } | { ok: false; problem: string } {
  const parsed = v.safeParse(hookJsonOutputSchema, json);
  if (!parsed.success) {
    const [problem] = parsed.issues;
    return { ok: false, problem: `${v.getDotPath(problem) ?? "output"}: ${problem.message}` };
  }
  return { ok: true, outcome: fromJsonOutput(event, name, parsed.output) };
}

function fromJsonOutput(
  event: HookEventName,
  name: string,
  output: HookJsonOutput,
): Partial<HookOutcome> {
  const outcome: Partial<HookOutcome> = {};
  if (output.continue === false) outcome.halt = { reason: output.stopReason ?? "" };
  const specific = output.hookSpecificOutput;
  if (specific?.additionalContext !== undefined && specific.additionalContext !== "") {
    outcome.additionalContext = [specific.additionalContext];
  }
  if (output.decision === "block") {
    outcome.blocked = true;
    outcome.reason = output.reason ?? `${name} blocked without giving a reason`;
  }
  if (event !== "PreToolUse") return outcome;

  if (specific?.updatedInput !== undefined) outcome.updatedInput = specific.updatedInput;
  const stated = specific?.permissionDecision;
  if (stated === "defer") return outcome;
  const decision =
    stated ??
    (output.decision === "approve" ? "allow" : output.decision === "block" ? "deny" : undefined);
  if (decision === undefined) return outcome;
  const decisionReason = specific?.permissionDecisionReason ?? output.reason;
  outcome.permissionDecision = decision;
  if (decisionReason !== undefined) outcome.permissionDecisionReason = decisionReason;
  if (decision === "deny") {
    outcome.blocked = true;
    outcome.reason = decisionReason ?? `${name} denied the tool call`;
  }
  return outcome;
}
