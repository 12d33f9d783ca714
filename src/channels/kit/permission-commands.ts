import type { SourceContext } from "../../gateway/channel-source.js";
import { shortId } from "./approval-cards.js";

/**
 * Carries out `/allow <id>` or `/deny <id> [note]` in a chat. The id is a
 * request's id or its start (the eight characters the card shows);
 * with one request waiting, it may be left out (`/deny not now` denies it
 * with the note "not now"). Returns what to answer in the
 * chat, or null when the request was settled: its card is then edited to say so, as it is
 * for a decision made on the page. `deciding` hears the request's id just before the decision.
 */
export async function answerPermissionCommand(
  permissions: SourceContext["permissions"],
  channelId: string,
  verb: "allow" | "deny",
  args: string,
  deciding?: (requestId: string) => void,
): Promise<string | null> {
  const words = args.split(/\s+/).filter((word) => word !== "");
  const pending = await permissions.list(channelId);
  // "/deny not that one" with one request waiting: all of it is the note.
  if (pending.length === 1 && words[0] !== undefined && !/^[0-9a-f-]{4,}$/i.test(words[0])) {
    words.unshift("");
  }
  const [given = "", ...rest] = words;
  const note = rest.join(" ");
  let requestId: string;
  if (given === "") {
    if (pending.length === 0) return "No permission request is waiting in this chat.";
    if (pending.length > 1) {
      const ids = pending.map((request) => shortId(request.id)).join(", ");
      return `Several permission requests are waiting (${ids}); say which: /${verb} <id>`;
    }
    requestId = (pending[0] as { id: string }).id;
  } else {
    const matches = pending.filter((request) => request.id.startsWith(given.toLowerCase()));
    if (matches.length > 1) return `More than one request starts with ${given}; give more of it.`;
    requestId = matches[0]?.id ?? given;
  }
  deciding?.(requestId);
  const outcome = await permissions.decide(
    channelId,
    requestId,
    verb,
    verb === "deny" && note !== "" ? note : undefined,
  );
  if (outcome.status === "decided") return null;
  if (outcome.status === "already_decided") {
    return `Permission request ${shortId(requestId)} was already ${outcome.decision === "allow" ? "allowed" : "denied"}.`;
  }
  if (outcome.status === "owner_gone") {
    return `Permission request ${shortId(requestId)} was asked on a gateway worker that is gone; nobody waits for the answer.`;
  }
  return `No permission request ${given} is waiting in this chat (answered already, timed out, or its turn ended).`;
}
