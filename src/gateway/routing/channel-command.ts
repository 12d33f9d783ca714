/**
 * What a channel can be told to do, typed or through the API: to its conversation (`compact`,
 * `reset`), or about it (`status`: what its agent is; `model`: switch the model, or with no
 * name say which it is and which it may be).
 */
export type ChannelCommand =
  | { name: "compact"; instructions: string }
  /** `confirm`: a person said yes to losing the uncommitted work of the channel's worktree. */
  | { name: "reset"; confirm: boolean }
  | { name: "status" }
  | { name: "model"; model: string };

/**
 * `/compact [focus]`, `/clear [confirm]` (also `/reset`), `/status` or `/model [name]` (and
 * `/compact@bot` as Telegram groups write commands) typed as a whole message; null for
 * anything else, so `/compacting is slow` or a path such as `/clear/x` stays a message for
 * the agent.
 */
export function parseChannelCommand(text: string): ChannelCommand | null {
  const match =
    /^\/(compact|clear|reset|status|model)(?:@[A-Za-z0-9_]{1,64})?(?:\s+([\s\S]*))?$/i.exec(
      text.trim(),
    );
  if (!match) return null;
  const name = (match[1] as string).toLowerCase();
  const rest = match[2]?.trim() ?? "";
  if (name === "compact") return { name: "compact", instructions: rest };
  if (name === "model") return /\s/.test(rest) ? null : { name: "model", model: rest };
  if (name === "status") return rest === "" ? { name: "status" } : null;
  if (rest === "") return { name: "reset", confirm: false };
  return rest.toLowerCase() === "confirm" ? { name: "reset", confirm: true } : null;
}

/** "182k", "950", "1.2M": a token count the way people read it. */
export function tokenCount(tokens: number): string {
  if (tokens >= 1_000_000) return `${Number((tokens / 1_000_000).toFixed(1))}M`;
  if (tokens >= 1000) return `${Math.round(tokens / 1000)}k`;
  return String(tokens);
}
