/**
 * What the bot says in Slack, through the Web API: a message posted in its conversation's
 * thread (`chat.postMessage`, links and media not unfurled), a sent message replaced
 * (`chat.update`), and a private answer to one person (`chat.postEphemeral`). Failures are the
 * Web API client's errors, read by `slackFailure`.
 */
import type { WebClient } from "@slack/web-api";
import type { OutgoingChat } from "../kit/chat-platform.js";
import { slackAddressOrRefusal } from "./slack-address.js";
import { slackMessage } from "./slack-message.js";

/** Posts `message` in the thread `channelId` names; resolves to its ts. */
export async function postMessage(
  web: WebClient,
  channelId: string,
  message: OutgoingChat,
): Promise<string> {
  const address = slackAddressOrRefusal(channelId);
  const result = await web.chat.postMessage({
    channel: address.channel,
    thread_ts: address.threadTs,
    unfurl_links: false,
    unfurl_media: false,
    ...slackMessage(message),
  } as Parameters<WebClient["chat"]["postMessage"]>[0]);
  return String(result.ts);
}

export async function updateMessage(
  web: WebClient,
  channelId: string,
  ts: string,
  message: OutgoingChat,
): Promise<void> {
  const address = slackAddressOrRefusal(channelId);
  await web.chat.update({
    channel: address.channel,
    ts,
    ...slackMessage(message),
  } as Parameters<WebClient["chat"]["update"]>[0]);
}

/** A private answer to a press: `pressId` is `<channel>|<user>|<thread ts>` (see `pressOf`). */
export async function answerPress(web: WebClient, pressId: string, text: string): Promise<void> {
  const [channel = "", user = "", threadTs] = pressId.split("|");
  await web.chat.postEphemeral({
    channel,
    user,
    text,
    ...(threadTs ? { thread_ts: threadTs } : {}),
  });
}
