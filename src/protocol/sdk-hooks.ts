import type { HostAnswer } from "./host-requests.js";

/**
 * One hook callback an Agent SDK host registered in `initialize`
 * (`hooks: { PreToolUse: [{ matcher, hookCallbackIds, timeout }] }`). rudder
 * runs it by sending `control_request` `hook_callback` with its `callback_id`.
 */
export interface SdkHookCallback {
  event: string;
  matcher: string | undefined;
  callbackId: string;
  /** The matcher's `timeout`, in seconds. */
  timeoutSeconds: number | undefined;
  /** `onFailure: "block"`: a callback that fails blocks instead of warning. */
  blockOnFailure: boolean;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The callbacks of an `initialize` request's `hooks` field, in the host's
 * order; entries of the wrong shape are skipped and named in `problems`.
 */
export function parseSdkHooks(value: unknown): {
  callbacks: SdkHookCallback[];
  problems: string[];
} {
  const callbacks: SdkHookCallback[] = [];
  const problems: string[] = [];
  if (value === undefined || value === null) return { callbacks, problems };
  if (!isObject(value)) return { callbacks, problems: ["hooks is not an object"] };
  for (const [event, matchers] of Object.entries(value)) {
    if (!Array.isArray(matchers)) {
      problems.push(`hooks.${event} is not a list`);
      continue;
    }
    for (const entry of matchers) {
      const ids = isObject(entry) ? entry.hookCallbackIds : undefined;
      if (!isObject(entry) || !Array.isArray(ids)) {
        problems.push(`a hooks.${event} entry has no hookCallbackIds`);
        continue;
      }
      const matcher = typeof entry.matcher === "string" ? entry.matcher : undefined;
      const timeout = entry.timeout;
      const timeoutSeconds =
        typeof timeout === "number" && Number.isFinite(timeout) && timeout > 0
          ? timeout
          : undefined;
      for (const callbackId of ids) {
        if (typeof callbackId !== "string") continue;
        callbacks.push({
          event,
          matcher,
          callbackId,
          timeoutSeconds,
          blockOnFailure: entry.onFailure === "block",
        });
      }
    }
  }
  return { callbacks, problems };
}

/** Runs a host's hook callback: Claude Code's hook input in, the hook's JSON answer out. */
export type HostHookCall = (
  input: Record<string, unknown>,
  signal: AbortSignal,
) => Promise<Record<string, unknown>>;

/** Where a host's hook callback goes: the session's hooks; false when rudder has no such event. */
export type AddHookCallback = (
  callback: SdkHookCallback & { name: string },
  call: HostHookCall,
) => boolean;

/**
 * Registers the hook callbacks of an `initialize` request's `hooks` with
 * `add`, each calling the host through `send` (`hook_callback`). Callback ids
 * in `registered` are skipped (a host that initializes again resends them).
 * What cannot run is named in one warning.
 */
export function registerSdkHooks(
  value: unknown,
  options: {
    add: AddHookCallback | undefined;
    send: (
      request: Record<string, unknown> & { subtype: string },
      signal: AbortSignal,
    ) => Promise<HostAnswer>;
    registered: Set<string>;
    warn: (message: string) => void;
  },
): void {
  const { callbacks, problems } = parseSdkHooks(value);
  for (const problem of problems) options.warn(`initialize: ${problem}; skipped`);
  const unsupported = new Set<string>();
  for (const callback of callbacks) {
    if (options.registered.has(callback.callbackId)) continue;
    const call: HostHookCall = async (input, signal) => {
      const answer = await options.send(
        {
          subtype: "hook_callback",
          callback_id: callback.callbackId,
          input,
          ...(typeof input.tool_use_id === "string" ? { tool_use_id: input.tool_use_id } : {}),
        },
        signal,
      );
      if (!answer.ok) throw new Error(`the host's hook callback failed: ${answer.error}`);
      return answer.response;
    };
    const name = `hook callback "${callback.callbackId}"`;
    if (options.add?.({ ...callback, name }, call) === true) {
      options.registered.add(callback.callbackId);
    } else {
      unsupported.add(callback.event);
    }
  }
  if (unsupported.size > 0) {
    options.warn(
      `hook callbacks for ${[...unsupported].join(", ")} are not supported by rudder; ignored`,
    );
  }
}
