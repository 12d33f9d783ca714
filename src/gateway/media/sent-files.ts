/**
 * Files an agent sends to its conversation. The agent's `send_file` tool (rudder's channel
 * tools, an MCP server the gateway gives both engines: `mcp__rudder__send_file`) checks the
 * file and answers the model; the gateway sees the call in the agent's stream (its input, then
 * its successful result) and keeps the file with the reply of that turn (`Settlement.files`).
 * The store keeps where the file is in the channel's workspace, not its bytes: a chat source
 * and the page read it from there, each time through `read` (inside the workspace, no link
 * followed, one link only, within the size cap).
 */
import { type FileHandle, realpath } from "node:fs/promises";
import { basename, extname, relative, sep } from "node:path";
import { overSendCap } from "../../tools/over-send-cap.js";
import { openWorkspaceFile } from "../../tools/workspace-file.js";
import type { GatewayEvent, SentFile } from "../events.js";
import { sniffImageType } from "./channel-media.js";
import { type SentFileCopies, sha256Of } from "./sent-file-copies.js";

/** The tool's name in rudder's channel tools (the MCP server `rudder`). */
export const SEND_FILE_TOOL = "send_file";

/** `send_file` as the agent names it: bare, or an MCP server's (`mcp__rudder__send_file`). */
export function isSendFileTool(name: string): boolean {
  return name === SEND_FILE_TOOL || /^mcp__[A-Za-z0-9_-]+__send_file$/.test(name);
}

const MEDIA_TYPES: Record<string, string> = {
  ".pdf": "application/pdf",
  ".txt": "text/plain",
  ".md": "text/markdown",
  ".csv": "text/csv",
  ".json": "application/json",
  ".html": "text/html",
  ".zip": "application/zip",
  ".mp3": "audio/mpeg",
  ".ogg": "audio/ogg",
  ".wav": "audio/wav",
  ".mp4": "video/mp4",
};

/**
 * The media type of a file sent: an image by its bytes (PNG, JPEG, GIF, WebP, whatever its
 * name says), anything else by its extension, else `application/octet-stream`. SVG is not
 * taken as an image (it can carry script).
 */
export function sentMediaType(name: string, head: Buffer): string {
  return (
    sniffImageType(head) ?? MEDIA_TYPES[extname(name).toLowerCase()] ?? "application/octet-stream"
  );
}

/** Thrown when a file cannot be read for sending; the message says why in one line. */
export class SentFileError extends Error {}

export interface SentFilesOptions {
  /** The folder the channel's agent works in (its worktree, or its binding's folder). */
  workspaceFor(channelId: string): Promise<string>;
  maxBytes: number;
  /** Where a copy of each file sent is kept until it is sent (absent: read when sent). */
  copies?: SentFileCopies | undefined;
  logger?: ((line: string) => void) | undefined;
}

interface Requested {
  path: string;
  caption: string | undefined;
}

export class SentFiles {
  readonly #options: SentFilesOptions;
  /** The calls of `send_file` whose result has not come yet, by tool use id. */
  readonly #calls = new Map<string, Requested & { channelId: string }>();
  /** Each channel's files sent since its last settlement, in order. */
  readonly #sent = new Map<string, Requested[]>();

  constructor(options: SentFilesOptions) {
    this.#options = options;
  }

  /** Follows one of the agent's events: a `send_file` call, then its result. */
  record(event: GatewayEvent): void {
    if (event.type === "tool_start" && isSendFileTool(event.name)) {
      const { path, caption } = event.input;
      if (typeof path !== "string" || path === "") return;
      this.#calls.set(event.toolUseId, {
        channelId: event.channelId,
        path,
        caption: typeof caption === "string" && caption.trim() !== "" ? caption : undefined,
      });
      return;
    }
    if (event.type !== "tool_end" || !this.#calls.has(event.toolUseId)) return;
    const call = this.#calls.get(event.toolUseId) as Requested & { channelId: string };
    this.#calls.delete(event.toolUseId);
    if (event.isError) return;
    const list = this.#sent.get(call.channelId) ?? [];
    list.push({ path: call.path, caption: call.caption });
    this.#sent.set(call.channelId, list);
  }

  /**
   * The files the channel's agent sent since the last take, each found in the workspace now
   * (path made relative to it, size and type read); one that cannot be is left out, logged.
   */
  async take(channelId: string): Promise<SentFile[]> {
    const requested = this.#sent.get(channelId);
    this.#sent.delete(channelId);
    if (requested === undefined) return [];
    const files: SentFile[] = [];
    for (const { path, caption } of requested) {
      try {
        const file = await this.#keep(channelId, path);
        files.push(caption === undefined ? file : { ...file, caption });
      } catch (error) {
        const why = error instanceof Error ? error.message : String(error);
        this.#options.logger?.(`gateway: ${channelId}: a file sent was not kept: ${why}`);
      }
    }
    return files;
  }

  /**
   * A file as the turn settles: with a copy kept, its bytes copied and hashed (`sha256`);
   * without, only its first bytes read (its type), the whole file read when it is sent.
   */
  async #keep(channelId: string, path: string): Promise<SentFile> {
    const { copies } = this.#options;
    if (copies === undefined) return (await this.load(channelId, path, "head")).file;
    const { file, data } = await this.load(channelId, path);
    return { ...file, ...(await copies.keep(data)) };
  }

  /**
   * The bytes of a file sent (`SourceContext.readSentFile`): its copy, else the workspace's
   * file as it is now, refused when it changed since the agent sent it (its hash differs).
   */
  async read(channelId: string, file: Pick<SentFile, "path" | "sha256" | "copy">): Promise<Buffer> {
    const kept = file.copy && (await this.#options.copies?.read(file.copy));
    if (kept) return kept;
    const { data } = await this.load(channelId, file.path);
    if (file.sha256 !== undefined && sha256Of(data) !== file.sha256) {
      throw new SentFileError(`${file.path} was changed after the agent sent it.`);
    }
    return data;
  }

  /** The file's copy is no longer needed: its send went out or was given up. */
  async release(file: Pick<SentFile, "copy">): Promise<void> {
    if (file.copy !== undefined) await this.#options.copies?.drop(file.copy);
  }

  /**
   * A file of the channel's workspace as it is now, with what is known of it and its bytes
   * (`read: "head"`: only the first few, for its type); rejects with a
   * `SentFileError` (outside the workspace, a link, missing, over the cap) or the workspace's
   * failure.
   */
  async load(
    channelId: string,
    path: string,
    read: "all" | "head" = "all",
  ): Promise<{ file: SentFile; data: Buffer }> {
    const workspace = await this.#options.workspaceFor(channelId);
    const opened = await openWorkspaceFile(workspace, path, "read");
    if (!opened.ok) throw new SentFileError(opened.error);
    try {
      const over = overSendCap(path, opened.size, this.#options.maxBytes);
      if (over !== undefined) throw new SentFileError(over);
      const data = read === "all" ? await opened.handle.readFile() : await readHead(opened.handle);
      const inside = relative(await realpath(workspace), opened.path)
        .split(sep)
        .join("/");
      const name = basename(opened.path);
      const mediaType = sentMediaType(name, data.subarray(0, 16));
      return { file: { path: inside, name, mediaType, size: opened.size }, data };
    } finally {
      await opened.handle.close();
    }
  }
}

/** The first bytes of a file, enough to know an image's type. */
async function readHead(handle: FileHandle): Promise<Buffer> {
  const head = Buffer.alloc(16);
  const { bytesRead } = await handle.read(head, 0, head.length, 0);
  return head.subarray(0, bytesRead);
}
