/**
 * The kit's media handling, for every platform: a message's attachments are checked against
 * the gateway's size cap (before the download when the platform tells the size, and after),
 * downloaded, and handed to the gateway (`SourceContext.attachments`), which saves them into the
 * channel's workspace, shows images to the model and transcribes voice notes. A platform builds
 * only each `Attachment.fetch`.
 */
import type { InboundFile, SourceAttachments } from "../../gateway/channel-source.js";
import type { MessageAttachment } from "../../gateway/events.js";
import { byteSize } from "../../tools/byte-size.js";
import type { Attachment, IncomingChat } from "./chat-platform.js";

/**
 * The hook for media: a message's attachments, before it is delivered. Returns the text the
 * agent gets (the caption with where the files were saved, say) and the attachments delivered
 * with it (`DeliveryMeta.attachments`: images among them are shown to the model), or an answer
 * for the chat instead of a delivery. Without one the gateway's media handling is used through
 * the kit (`attachmentIntake`: images to the model, files to the workspace's inbox); with
 * neither, a message of files alone is answered that only text reaches the agent.
 */
export type AttachmentHandler = (
  message: IncomingChat,
  signal: AbortSignal,
) => Promise<{ text: string; attachments?: readonly MessageAttachment[] } | { answer: string }>;

const IMAGE_TYPES = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"]);

const WORDS: Record<Attachment["kind"], string> = {
  photo: "photo",
  document: "file",
  voice: "voice note",
  audio: "audio file",
  video: "video",
  other: "file",
};

/** How the gateway takes a platform's kind of file. */
export function inboundKind(attachment: Attachment): InboundFile["kind"] {
  if (attachment.kind === "photo") return "image";
  if (attachment.kind === "voice" || attachment.kind === "audio") return "voice";
  const type = attachment.mimeType?.split(";")[0]?.trim().toLowerCase() ?? "";
  if (IMAGE_TYPES.has(type)) return "image";
  return "file";
}

function mediaTypeOf(attachment: Attachment): string | undefined {
  if (attachment.mimeType) return attachment.mimeType;
  if (attachment.kind === "photo") return "image/jpeg";
  if (attachment.kind === "voice") return "audio/ogg";
  return undefined;
}

/** The answer for a file over the cap. */
export function tooBigAnswer(attachment: Attachment, size: number, maxBytes: number): string {
  const what = attachment.name
    ? `The ${WORDS[attachment.kind]} ${attachment.name}`
    : `The ${WORDS[attachment.kind]}`;
  return `${what} is ${byteSize(size)}; files up to ${byteSize(maxBytes)} reach the agent.`;
}

/** The kit's default `AttachmentHandler`: download, check, hand to the gateway's media. */
export function attachmentIntake(media: SourceAttachments): AttachmentHandler {
  return async (message: IncomingChat, signal: AbortSignal) => {
    const files: InboundFile[] = [];
    for (const attachment of message.attachments) {
      if (attachment.size !== undefined && attachment.size > media.maxBytes) {
        return { answer: tooBigAnswer(attachment, attachment.size, media.maxBytes) };
      }
      let data: Buffer;
      try {
        data = await attachment.fetch(signal);
      } catch (error) {
        const why = error instanceof Error ? error.message : String(error);
        return { answer: `The ${WORDS[attachment.kind]} could not be downloaded: ${why}` };
      }
      if (data.length > media.maxBytes) {
        return { answer: tooBigAnswer(attachment, data.length, media.maxBytes) };
      }
      files.push({
        kind: inboundKind(attachment),
        name: attachment.name,
        mediaType: mediaTypeOf(attachment),
        data,
      });
    }
    return media.receive(message.channelId, message.text, files, signal);
  };
}
