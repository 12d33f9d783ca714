/**
 * What the bot says in Slack, through the Web API: a message posted in its conversation's
 * thread (`chat.postMessage`, links and media not unfurled), a sent message replaced
 * (`chat.update`), a private answer to one person (`chat.postEphemeral`), and a file uploaded
 * into the thread (`files.uploadV2`: an upload URL from `files.getUploadURLExternal`, the bytes
 * posted there, `files.completeUploadExternal` sharing it with its caption). Failures are the
 * Web API client's errors, read by `slackFailure`.
 */
import type { WebClient } from "@slack/web-api";
import type { OutgoingChat, OutgoingFile } from "../kit/chat-platform.js";
import { slackAddressOrRefusal } from "./slack-address.js";
import { slackMessage } from "./slack-message.js";
import { markdownToMrkdwn } from "./slack-mrkdwn.js";

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

/**
 * Uploads `file` into the thread `channelId` names, its caption (markdown, as mrkdwn) as the
 * comment shown with it; resolves to Slack's file id (Slack names no message for it at once).
 */
export async function uploadFile(
  web: WebClient,
  channelId: string,
  file: OutgoingFile,
): Promise<string> {
  const address = slackAddressOrRefusal(channelId);
  const caption = file.caption?.trim();
  const result = await web.filesUploadV2({
    channel_id: address.channel,
    thread_ts: address.threadTs,
    file: file.data,
    filename: file.name,
    title: file.name,
    ...(caption ? { initial_comment: markdownToMrkdwn(caption) } : {}),
  });
  const completed = (result.files ?? []) as Array<{ files?: Array<{ id?: string }> }>;
  return completed[0]?.files?.[0]?.id ?? file.name;
}
