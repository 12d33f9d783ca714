import { DEFAULT_HOOK_TIMEOUT_SECONDS, runCommandHook } from "./command-hook.js";
import { matcherProblem, matchesTool } from "./matcher.js";
import { emptyOutcome, mergeOutcomes } from "./merge-outcomes.js";
import type {
  CommandHookConfig,
  HookEventName,
  HookInput,
  HookOutcome,
  HookRunner,
  HooksConfig,
} from "./types.js";

/**
 * An in-process hook. It sees rudder's tool names (`bash`) in `input`, and
 * should stop work when `signal` aborts (the run was cancelled or the hook
 * timed out). Throwing is reported as a warning.
 */
export type HookCallback = (
  input: HookInput,
  signal: AbortSignal,
) => Promise<Partial<HookOutcome> | undefined> | Partial<HookOutcome> | undefined;

export interface HookRegistry extends HookRunner {
  /**
   * Adds an in-process hook for `event`; `matcher` is a tool-name pattern
   * as in settings (ignored for UserPromptSubmit and Stop); `timeoutSeconds`
   * replaces the runner's default for this callback. Returns a function that
   * removes it.
   */
  on(
    event: HookEventName,
    callback: HookCallback,
    matcher?: string,
    options?: { timeoutSeconds?: number },
  ): () => void;
}

export interface HookRunnerOptions {
  /** Command hooks from settings. */
  commandHooks?: HooksConfig;
  /** Sent to hooks when the input's own `session_id` is empty. */
  sessionId?: string;
  /** The project directory hooks run in. */
  cwd: string;
  /** Timeout for hooks that set none (default 60 s). */
  defaultTimeoutSeconds?: number;
  /** Base environment for command hooks (default `process.env`). */
  env?: NodeJS.ProcessEnv;
}

type Entry =
  | { kind: "command"; matcher: string | undefined; hook: CommandHookConfig }
  | {
      kind: "callback";
      matcher: string | undefined;
      callback: HookCallback;
      timeoutSeconds: number | undefined;
    };

/**
 * Creates the runner the agent loop calls at each of the four events. All
 * hooks matching an event run in parallel, as in Claude Code (identical
 * commands once); their parts are merged in order: command hooks in
 * settings order, then callbacks in registration order. For Stop, a block
 * means "do not stop: continue with `reason` as the next user message"
 * (the loop bounds how often). `run` never rejects.
 */
export function createHookRunner(options: HookRunnerOptions): HookRegistry {
  const callbacks = new Map<HookEventName, Entry[]>();
  const setupWarnings = new Map<HookEventName, string[]>();
  const commandEntries = new Map<HookEventName, Entry[]>();
  for (const [event, groups] of Object.entries(options.commandHooks ?? {}) as [
    HookEventName,
    HooksConfig[HookEventName],
  ][]) {
    const entries: Entry[] = [];
    for (const group of groups ?? []) {
      const problem = matcherProblem(group.matcher);
      if (problem !== undefined) {
        const list = setupWarnings.get(event) ?? [];
        list.push(`${event} hooks with ${problem} never run`);
        setupWarnings.set(event, list);
      }
      for (const hook of group.hooks)
        entries.push({ kind: "command", matcher: group.matcher, hook });
    }
    commandEntries.set(event, entries);
  }
  const defaultTimeoutSeconds = options.defaultTimeoutSeconds ?? DEFAULT_HOOK_TIMEOUT_SECONDS;

  const runEntry = async (
    entry: Entry,
    input: HookInput,
    signal: AbortSignal,
  ): Promise<Partial<HookOutcome>> => {
    if (entry.kind === "command") {
      return runCommandHook(entry.hook, input, {
        cwd: options.cwd,
        defaultTimeoutSeconds,
        signal,
        ...(options.env === undefined ? {} : { env: options.env }),
      });
    }
    return runCallback(
      entry.callback,
      input,
      signal,
      entry.timeoutSeconds ?? defaultTimeoutSeconds,
    );
  };

  return {
    on(event, callback, matcher, callbackOptions) {
      const timeoutSeconds = callbackOptions?.timeoutSeconds;
      const entry: Entry = {
        kind: "callback",
        matcher,
        callback,
        timeoutSeconds:
          timeoutSeconds !== undefined && Number.isFinite(timeoutSeconds) && timeoutSeconds > 0
            ? timeoutSeconds
            : undefined,
      };
      const list = callbacks.get(event) ?? [];
      list.push(entry);
      callbacks.set(event, list);
      return () => {
        const current = callbacks.get(event) ?? [];
        callbacks.set(
          event,
          current.filter((candidate) => candidate !== entry),
        );
      };
    },
    async run(input, signal) {
      const event = input.hook_event_name;
      const fullInput: HookInput =
        input.session_id === "" && options.sessionId !== undefined
          ? { ...input, session_id: options.sessionId }
          : input;
      const selected = dedupe(
        [...(commandEntries.get(event) ?? []), ...(callbacks.get(event) ?? [])].filter((entry) =>
          matchesTool(event, entry.matcher, input.tool_name),
        ),
      );
      const warnings = setupWarnings.get(event) ?? [];
      if (selected.length === 0) return { ...emptyOutcome(), warnings: [...warnings] };
      const parts = await Promise.all(
        selected.map((entry) =>
          runEntry(entry, fullInput, signal).catch(
            (error: unknown): Partial<HookOutcome> => ({
              warnings: [`hook for ${event} failed: ${errorMessage(error)}`],
            }),
          ),
        ),
      );
      return mergeOutcomes(event, [{ warnings: [...warnings] }, ...parts]);
    },
  };
}

/** Runs a command line once however many matching groups list it, as Claude Code does. */
function dedupe(entries: readonly Entry[]): Entry[] {
  const seen = new Set<string>();
  return entries.filter((entry) => {
    if (entry.kind !== "command") return true;
    const key = JSON.stringify([entry.hook.command, entry.hook.args]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

async function runCallback(
  callback: HookCallback,
  input: HookInput,
  signal: AbortSignal,
  timeoutSeconds: number,
): Promise<Partial<HookOutcome>> {
  const timeout = AbortSignal.timeout(timeoutSeconds * 1000);
  const combined = AbortSignal.any([signal, timeout]);
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<Partial<HookOutcome>>((resolve) => {
    onAbort = () =>
      resolve({
        warnings: [
          timeout.aborted
            ? `hook callback for ${input.hook_event_name} timed out after ${timeoutSeconds}s`
            : `hook callback for ${input.hook_event_name} was cancelled`,
        ],
      });
    if (combined.aborted) onAbort();
    else combined.addEventListener("abort", onAbort, { once: true });
  });
  try {
    const result = Promise.resolve().then(() => callback(input, combined));
    return (await Promise.race([result, aborted])) ?? {};
  } finally {
    if (onAbort !== undefined) combined.removeEventListener("abort", onAbort);
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
