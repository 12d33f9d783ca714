/**
 * The gateway's media handling (`SourceContext.attachments`, and the HTTP API's attachments):
 * each file of a message is saved into the channel's workspace under `inbox/` and becomes one
 * of the message's attachments (stored with it: `MessageAttachment`). An image is shown to
 * the model from there (the runner adds it as an image block); any other file is also named in
 * the text the agent gets, one line per file: a document with its size and type, a voice note
 * with its transcript when a transcriber is configured.
 */
import { imageMediaType, MAX_IMAGE_BYTES } from "../../claude-cli/attached-images.js";
import { byteSize } from "../../tools/byte-size.js";
import type { InboundFile, ReceivedFiles, SourceAttachments } from "../channel-source.js";
import type { MessageAttachment } from "../events.js";
import { InboxError, sanitiseFileName, saveInboxFile } from "./inbox-file.js";
import type { Transcriber } from "./transcriber.js";

/** Files up to this size reach the agent unless configured otherwise (Telegram's bots: 20 MB). */
export const DEFAULT_MAX_ATTACHMENT_BYTES = 20 * 1024 * 1024;

export interface ChannelMediaOptions {
  /** The folder the channel's agent works in (made first, for a worktree). */
  workspaceFor(channelId: string): Promise<string>;
  maxBytes?: number | undefined;
  transcriber?: Transcriber | undefined;
  logger?: ((line: string) => void) | undefined;
}

const EXTENSIONS: Record<string, string> = {
  "image/jpeg": ".jpg",
  "image/png": ".png",
  "image/gif": ".gif",
  "image/webp": ".webp",
  "audio/ogg": ".ogg",
  "audio/mpeg": ".mp3",
  "audio/mp4": ".m4a",
  "audio/wav": ".wav",
  "audio/webm": ".webm",
  "application/pdf": ".pdf",
  "text/plain": ".txt",
};

/** An image's type by its first bytes (what it is, whatever it was called), else undefined. */
export function sniffImageType(data: Buffer): string | undefined {
  if (data.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) {
    return "image/png";
  }
  if (data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return "image/jpeg";
  if (data.subarray(0, 4).toString("latin1") === "GIF8") return "image/gif";
  const riff = data.subarray(0, 4).toString("latin1") === "RIFF";
  if (riff && data.subarray(8, 12).toString("latin1") === "WEBP") return "image/webp";
  return undefined;
}

/** The file's name in the inbox: sanitised, its extension the one its bytes call for. */
function fileName(file: InboundFile, mediaType: string | undefined): string {
  const fallback = file.kind === "image" ? "image" : file.kind === "voice" ? "voice-note" : "file";
  const name = sanitiseFileName(file.name, fallback);
  const extension = EXTENSIONS[(mediaType ?? "").split(";")[0]?.trim() ?? ""];
  if (!extension) return name;
  if (file.kind === "image") {
    const stem = name.includes(".") ? name.slice(0, name.lastIndexOf(".")) : name;
    return `${stem}${extension}`;
  }
  return name.includes(".") ? name : `${name}${extension}`;
}

export class ChannelMedia implements SourceAttachments {
  readonly maxBytes: number;
  readonly #options: ChannelMediaOptions;

  constructor(options: ChannelMediaOptions) {
    this.#options = options;
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_ATTACHMENT_BYTES;
  }

  /** The answer for a file over the cap, or undefined when it fits. */
  tooBig(name: string | undefined, size: number): string | undefined {
    if (size <= this.maxBytes) return undefined;
    const what = name ? `The file ${name}` : "The file";
    return `${what} is ${byteSize(size)}; files up to ${byteSize(this.maxBytes)} reach the agent.`;
  }

  async receive(
    channelId: string,
    text: string,
    files: readonly InboundFile[],
    signal: AbortSignal,
  ): Promise<ReceivedFiles> {
    for (const file of files) {
      const refusal = this.tooBig(file.name, file.data.length);
      if (refusal) return { answer: refusal };
    }
    let workspace: string;
    try {
      workspace = await this.#options.workspaceFor(channelId);
    } catch (error) {
      return { answer: `The files could not be saved: ${describe(error)}` };
    }
    const lines: string[] = [];
    const attachments: MessageAttachment[] = [];
    for (const file of files) {
      try {
        const taken = await this.#take(workspace, file, signal);
        attachments.push(taken.attachment);
        if (taken.line !== undefined) lines.push(taken.line);
      } catch (error) {
        const why = error instanceof InboxError ? error.message : describe(error);
        this.#options.logger?.(`gateway: a file for ${channelId} was not saved: ${why}`);
        return {
          answer: `The file ${file.name ?? ""} could not be saved: ${why}`.replace("  ", " "),
        };
      }
    }
    const joined = [text.trim(), ...lines].filter((line) => line !== "").join("\n");
    return { text: joined, attachments };
  }

  /** Saves one file; resolves to it as an attachment, and its line in the agent's text if any. */
  async #take(
    workspace: string,
    given: InboundFile,
    signal: AbortSignal,
  ): Promise<{ attachment: MessageAttachment; line?: string }> {
    const sniffed = sniffImageType(given.data);
    // Images are what their bytes say; a file that is not one is not shown as one.
    const file: InboundFile =
      given.kind === "image"
        ? { ...given, kind: sniffed ? "image" : "file", mediaType: sniffed ?? given.mediaType }
        : given;
    const path = await saveInboxFile(workspace, fileName(file, file.mediaType), file.data);
    const size = byteSize(file.data.length);
    const type = file.mediaType ? `, ${file.mediaType}` : "";
    const attachment = (kind: MessageAttachment["kind"]): MessageAttachment => ({
      kind,
      path,
      mediaType: file.mediaType?.split(";")[0]?.trim() || "application/octet-stream",
      size: file.data.length,
    });
    if (file.kind === "image" && imageMediaType(path) !== undefined) {
      if (file.data.length <= MAX_IMAGE_BYTES) return { attachment: attachment("image") };
      return {
        attachment: attachment("file"),
        line: `[attached file: ${path} (${size}${type}; too large to show as an image)]`,
      };
    }
    if (file.kind === "voice") {
      return {
        attachment: attachment("voice"),
        line: await this.#voiceLine(workspace, path, file, signal),
      };
    }
    return { attachment: attachment("file"), line: `[attached file: ${path} (${size}${type})]` };
  }

  /** A voice note's line: where it is, and its transcript when a transcriber made one. */
  async #voiceLine(
    workspace: string,
    path: string,
    file: InboundFile,
    signal: AbortSignal,
  ): Promise<string> {
    const size = byteSize(file.data.length);
    const type = file.mediaType ? `, ${file.mediaType}` : "";
    const transcriber = this.#options.transcriber;
    if (!transcriber) return `[attached voice note: ${path} (${size}${type}; not transcribed)]`;
    const transcript = await transcriber.transcribe(workspace, path, file, signal);
    if (!transcript.ok) {
      this.#options.logger?.(`gateway: transcribing ${path} failed: ${transcript.error}`);
      return `[attached voice note: ${path} (${size}${type}; transcription failed: ${transcript.error})]`;
    }
    return `[attached voice note: ${path} (${size}${type}), transcript:]\n${transcript.text}`;
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
