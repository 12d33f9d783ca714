/**
 * The `From:` line the gateway writes first in each message it hands an agent, inside the
 * external-content fence (the fence's markers stay as they are), naming who sent it.
 */
import type { DeliveryMeta } from "../channel-source.js";
import type { MessageRecord } from "../store/store.js";

/**
 * Who a message's stored `source` (`http`, `schedule:<id>`, `<adapter>[:<user id>[:<name>]]`)
 * names.
 */
export function senderOf(source: string): string {
  if (source === "http") return "the gateway's owner (web page or HTTP API)";
  if (source === "cli") return "the gateway's owner (rudder send)";
  const [kind = "", ...restParts] = source.split(":");
  const rest = restParts.join(":");
  if (kind === "schedule") return `a schedule (${rest})`;
  const platform = kind === "" ? "a source" : kind.charAt(0).toUpperCase() + kind.slice(1);
  const [user = "", ...nameParts] = restParts;
  const name = nameParts.join(":");
  if (name !== "") return `${name}, a ${platform} user (id ${user})`;
  return rest === "" ? `a ${platform} user` : `a ${platform} user (id ${rest})`;
}

/** The message's text as its agent gets it: the `From:` line, then the text. */
export function withSenderLine(message: Pick<MessageRecord, "source" | "text">): string {
  return `From: ${senderOf(message.source)}\n${message.text}`;
}

/**
 * The `source` stored with a delivered message: the meta's `source` (else the source's name),
 * with the sender's `userId` from the meta after a colon when the source gives one, and their
 * `userName` (a chat platform's display name: one line, at most 64 characters) after another.
 */
export function senderSource(meta: DeliveryMeta | undefined, sourceName: string): string {
  const base = typeof meta?.source === "string" ? meta.source : sourceName;
  const user = meta?.userId;
  if (typeof user !== "string" && typeof user !== "number") return base;
  const name =
    typeof meta?.userName === "string"
      ? meta.userName.replace(/\s+/g, " ").trim().slice(0, 64)
      : "";
  return name === "" ? `${base}:${user}` : `${base}:${user}:${name}`;
}
