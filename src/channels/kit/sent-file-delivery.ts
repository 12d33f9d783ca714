/**
 * How one ledger entry of kind `file` (a file the agent sent with its `send_file` tool) goes
 * out: its bytes read from the channel's workspace at the time of sending, then the platform's
 * `sendFile`. A platform without `sendFile`, a gateway that lends no reader, or a file no
 * longer readable (deleted, grown past the cap) gets one text line instead, naming the file
 * and where it is in the workspace, so the conversation always learns of it.
 */
import type { SentFile } from "../../gateway/events.js";
import type { OutboundEntry } from "../../gateway/store/source-store.js";
import { byteSize } from "../../tools/byte-size.js";
import type { ChatPlatform } from "./chat-platform.js";

/** `SourceContext.readSentFile`: the file's bytes, or a rejection with a one-line reason. */
export type ReadSentFile = (
  channelId: string,
  file: SentFile,
  signal: AbortSignal,
) => Promise<Buffer>;

/** The line a chat gets instead of the file (`why`: what kept it from being sent). */
export function sentFileLine(file: SentFile, why?: string): string {
  const where = `${file.name} (${byteSize(file.size)}), in its workspace at ${file.path}`;
  const caption = file.caption ? `\n${file.caption}` : "";
  return why
    ? `The agent sent a file, ${where}, but it could not be sent here: ${why}${caption}`
    : `The agent made a file: ${where}.${caption}`;
}

/** Sends the entry's file (or its line); resolves to the platform's id of what was sent. */
export async function sendFileEntry(
  entry: OutboundEntry,
  platform: ChatPlatform,
  read: ReadSentFile | undefined,
  signal: AbortSignal,
): Promise<string> {
  const { file } = JSON.parse(entry.body) as { file: SentFile };
  const { channelId } = entry;
  if (!platform.sendFile || !read) {
    return platform.send(channelId, { text: sentFileLine(file), format: "plain" }, signal);
  }
  let data: Buffer;
  try {
    data = await read(channelId, file, signal);
  } catch (error) {
    if (signal.aborted) throw error;
    const why = error instanceof Error ? error.message : String(error);
    return platform.send(channelId, { text: sentFileLine(file, why), format: "plain" }, signal);
  }
  return platform.sendFile(
    channelId,
    { name: file.name, mediaType: file.mediaType, data, caption: file.caption },
    signal,
  );
}
