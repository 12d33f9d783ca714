/**
 * The lines a host writes to `rudder run -p --input-format stream-json`, parsed and checked: a
 * user message (its text and base64 images), control requests and responses, cancels.
 */
import type { ImageBlock } from "../model/types.js";

/** One line a host writes to rudder's stdin in stream-json mode, checked. */
export type InputLine =
  | {
      type: "user";
      text: string;
      /** Base64 image blocks of the message (a photo someone sent), in order. */
      images: ImageBlock[];
      uuid: string | undefined;
      warnings: string[];
    }
  | {
      type: "control_request";
      requestId: string;
      request: Record<string, unknown> & { subtype: string };
    }
  | {
      type: "control_response";
      requestId: string;
      subtype: string;
      response: Record<string, unknown>;
      error: string | undefined;
    }
  | { type: "control_cancel_request"; requestId: string }
  /** Lines hosts send that need no answer (`keep_alive`, `update_environment_variables`). */
  | { type: "ignored" }
  | { type: "invalid"; error: string };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function invalid(error: string): InputLine {
  return { type: "invalid", error };
}

/** A base64 image block as the Messages API takes it, or undefined. */
function imageBlock(block: Record<string, unknown>): ImageBlock | undefined {
  const source = block.source;
  if (block.type !== "image" || !isObject(source) || source.type !== "base64") return undefined;
  const { media_type: mediaType, data } = source;
  if (typeof mediaType !== "string" || typeof data !== "string") return undefined;
  return { type: "image", source: { type: "base64", media_type: mediaType, data } };
}

/** The text and images of a user message's content; other block kinds are named in `warnings`. */
function userText(
  content: unknown,
): { text: string; images: ImageBlock[]; warnings: string[] } | undefined {
  if (typeof content === "string") return { text: content, images: [], warnings: [] };
  if (!Array.isArray(content)) return undefined;
  const texts: string[] = [];
  const images: ImageBlock[] = [];
  const warnings: string[] = [];
  for (const block of content) {
    const image = isObject(block) ? imageBlock(block) : undefined;
    if (isObject(block) && block.type === "text" && typeof block.text === "string") {
      texts.push(block.text);
    } else if (image) {
      images.push(image);
    } else {
      const kind = isObject(block) && typeof block.type === "string" ? block.type : "unknown";
      warnings.push(
        `a content block of type "${kind}" was dropped: rudder takes text and base64 images`,
      );
    }
  }
  return { text: texts.join("\n"), images, warnings };
}

/** Parses and checks one input line. Never throws: bad input is `{ type: "invalid" }`. */
export function parseInputLine(line: string): InputLine {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    return invalid(`not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!isObject(value)) return invalid("a line must be a JSON object");
  switch (value.type) {
    case "user": {
      const message = value.message;
      if (!isObject(message)) return invalid("user line without a message object");
      if (message.role !== undefined && message.role !== "user") {
        return invalid(`user line with message.role "${String(message.role)}"`);
      }
      const content = userText(message.content);
      if (content === undefined) return invalid("message.content must be a string or blocks");
      const uuid = typeof value.uuid === "string" && value.uuid !== "" ? value.uuid : undefined;
      return {
        type: "user",
        text: content.text,
        images: content.images,
        uuid,
        warnings: content.warnings,
      };
    }
    case "control_request": {
      const request = value.request;
      if (typeof value.request_id !== "string" || value.request_id === "") {
        return invalid("control_request without a request_id");
      }
      if (!isObject(request) || typeof request.subtype !== "string") {
        return invalid("control_request without request.subtype");
      }
      return {
        type: "control_request",
        requestId: value.request_id,
        request: request as Record<string, unknown> & { subtype: string },
      };
    }
    case "control_response": {
      const response = value.response;
      if (!isObject(response) || typeof response.request_id !== "string") {
        return invalid("control_response without response.request_id");
      }
      return {
        type: "control_response",
        requestId: response.request_id,
        subtype: typeof response.subtype === "string" ? response.subtype : "success",
        response: isObject(response.response) ? response.response : {},
        error: typeof response.error === "string" ? response.error : undefined,
      };
    }
    case "control_cancel_request":
      if (typeof value.request_id !== "string")
        return invalid("control_cancel_request without a request_id");
      return { type: "control_cancel_request", requestId: value.request_id };
    case "keep_alive":
    case "update_environment_variables":
      return { type: "ignored" };
    default:
      return invalid(`unsupported input line type ${JSON.stringify(value.type)}`);
  }
}
