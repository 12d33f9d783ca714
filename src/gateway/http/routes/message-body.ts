/**
 * The body of `POST /api/channels/:id/messages`: JSON `{text, via?, attachments?: [{name,
 * mediaType, data (base64)}]}`, or `multipart/form-data` with a `text` field (and `via`) and
 * files. Each file is at most the gateway's attachment cap (413 past it), ten at most; the
 * text at most 1 MiB (413); a message needs text or a file (400 otherwise). Images are told by their type, audio is a voice
 * note to transcribe, anything else a file for the workspace.
 */
import * as v from "valibot";
import { byteSize } from "../../../tools/byte-size.js";
import type { InboundFile } from "../../channel-source.js";
import { ApiError, readJson } from "./api-request.js";

/** A message's text at most, in bytes (the API's cap on other bodies). */
export const MAX_TEXT_BYTES = 1024 * 1024;

/** Files one message may carry. */
export const MAX_ATTACHMENTS = 10;

export interface MessageBody {
  /** Undefined when the body had none. */
  text: string | undefined;
  via: "page" | "cli" | undefined;
  files: InboundFile[];
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

const jsonBody = v.object({
  text: v.optional(v.string("text must be a string")),
  /** Who sends through the API: `cli` for `rudder send` (shown as such on the page). */
  via: v.optional(v.picklist(["page", "cli"], 'via must be "page" or "cli"')),
  attachments: v.optional(
    v.pipe(
      v.array(
        v.object({
          name: v.pipe(v.string(), v.maxLength(255, "name must be at most 255 characters")),
          mediaType: v.optional(v.pipe(v.string(), v.maxLength(255)), "application/octet-stream"),
          data: v.pipe(v.string(), v.regex(BASE64, "data must be base64")),
        }),
        "attachments must be a list",
      ),
      v.maxLength(MAX_ATTACHMENTS, `at most ${MAX_ATTACHMENTS} attachments`),
    ),
    [],
  ),
});

function kindOf(mediaType: string): InboundFile["kind"] {
  const type = mediaType.split(";")[0]?.trim().toLowerCase() ?? "";
  if (type.startsWith("image/")) return "image";
  if (type.startsWith("audio/")) return "voice";
  return "file";
}

function checked(files: InboundFile[], maxBytes: number): InboundFile[] {
  for (const file of files) {
    if (file.data.length > maxBytes) {
      throw new ApiError(
        `the attachment ${file.name ?? ""} is ${byteSize(file.data.length)}; files up to ${byteSize(maxBytes)} reach the agent`.replace(
          "  ",
          " ",
        ),
        413,
      );
    }
  }
  return files;
}

async function multipartBody(request: Request, maxBytes: number): Promise<MessageBody> {
  let form: FormData;
  try {
    form = await request.formData();
  } catch {
    throw new ApiError("the body must be valid multipart/form-data");
  }
  const text = form.get("text");
  const via = form.get("via");
  if (via !== null && via !== "page" && via !== "cli")
    throw new ApiError('via must be "page" or "cli"');
  const files: InboundFile[] = [];
  for (const [field, value] of form.entries()) {
    if (typeof value === "string") continue;
    if (files.length === MAX_ATTACHMENTS)
      throw new ApiError(`at most ${MAX_ATTACHMENTS} attachments`);
    const mediaType = value.type || "application/octet-stream";
    files.push({
      kind: kindOf(mediaType),
      name: value.name || field,
      mediaType,
      data: Buffer.from(await value.arrayBuffer()),
    });
  }
  return {
    text: typeof text === "string" ? text : undefined,
    via: via === null ? undefined : via,
    files: checked(files, maxBytes),
  };
}

/** Reads and checks the body; throws `ApiError` (400, 413) with one line. */
export async function readMessageBody(request: Request, maxBytes: number): Promise<MessageBody> {
  const type = request.headers.get("content-type") ?? "";
  const body = /^multipart\/form-data/i.test(type)
    ? await multipartBody(request, maxBytes)
    : await readJson(request, jsonBody).then(({ text, via, attachments }) => ({
        text,
        via,
        files: checked(
          attachments.map((attachment) => ({
            kind: kindOf(attachment.mediaType),
            name: attachment.name,
            mediaType: attachment.mediaType,
            data: Buffer.from(attachment.data, "base64"),
          })),
          maxBytes,
        ),
      }));
  if (Buffer.byteLength(body.text ?? "") > MAX_TEXT_BYTES) {
    throw new ApiError(`the text is larger than ${MAX_TEXT_BYTES} bytes`, 413);
  }
  if (body.files.length === 0 && body.text === undefined) throw new ApiError("text is required");
  if (body.files.length === 0 && body.text?.trim() === "") {
    throw new ApiError("text must not be empty");
  }
  return body;
}
