/**
 * The size cap on files an agent sends to its conversation (`RUDDER_ATTACHMENT_MAX_MB`), said
 * once for the `send_file` tool (at the call) and the gateway (when it keeps and sends the
 * file). Its own module so the gateway does not load the tool (and its JSON Schema library).
 */
import { byteSize } from "./byte-size.js";

/** Why a file of `size` bytes cannot be sent under `maxBytes`, or undefined when it can. */
export function overSendCap(path: string, size: number, maxBytes: number): string | undefined {
  if (size <= maxBytes) return undefined;
  return `${path} is ${byteSize(size)}; files up to ${byteSize(maxBytes)} can be sent.`;
}
