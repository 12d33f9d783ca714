import { toolNameAliases } from "./tool-names.js";
import type { HookEventName } from "./types.js";

/** Events whose matcher is a tool-name pattern; the others ignore matchers, as Claude Code does. */
const TOOL_EVENTS: ReadonlySet<HookEventName> = new Set(["PreToolUse", "PostToolUse"]);

/** A matcher made only of these characters is a name or a `|` list, not a regex. */
const PLAIN_MATCHER = /^[A-Za-z0-9_|, -]*$/;

/**
 * Whether a matcher selects this event and tool, with Claude Code's rules:
 * absent, empty or `*` matches everything; a plain matcher (`Bash`,
 * `Edit|Write`) is a list of exact names; anything else is an unanchored
 * JavaScript regex. Either rudder's tool name or Claude Code's may match.
 * A regex that does not compile matches nothing.
 */
export function matchesTool(
  event: HookEventName,
  matcher: string | undefined,
  toolName: string | undefined,
): boolean {
  if (!TOOL_EVENTS.has(event)) return true;
  const pattern = matcher?.trim() ?? "";
  if (pattern === "" || pattern === "*") return true;
  if (toolName === undefined) return false;
  const names = toolNameAliases(toolName);
  if (PLAIN_MATCHER.test(pattern)) {
    const wanted = pattern
      .split(/[|,]/)
      .map((part) => part.trim())
      .filter((part) => part !== "");
    return names.some((name) => wanted.includes(name));
  }
  const regex = compile(pattern);
  return regex !== undefined && names.some((name) => regex.test(name));
}

/** Why a matcher is unusable, or undefined when it is fine. */
export function matcherProblem(matcher: string | undefined): string | undefined {
  const pattern = matcher?.trim() ?? "";
  if (pattern === "" || pattern === "*" || PLAIN_MATCHER.test(pattern)) return undefined;
  return compile(pattern) === undefined ? `matcher "${pattern}" is not a valid regex` : undefined;
}

function compile(pattern: string): RegExp | undefined {
  try {
    return new RegExp(pattern);
  } catch {
    return undefined;
  }
}
