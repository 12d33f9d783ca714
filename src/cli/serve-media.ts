/**
 * `rudder serve`'s media settings from the environment: the attachment cap
 * (`RUDDER_ATTACHMENT_MAX_MB`, default 20) and how voice notes are transcribed
 * (`RUDDER_TRANSCRIBE_URL`, an OpenAI-compatible `/audio/transcriptions` URL, with
 * `RUDDER_TRANSCRIBE_API_KEY` and `RUDDER_TRANSCRIBE_MODEL`; or `RUDDER_TRANSCRIBE_COMMAND`, a
 * local command given the file's path as its last argument). A bad cap is one line.
 */
import type { GatewayOptions } from "../gateway/index.js";

export function serveMedia(env: NodeJS.ProcessEnv): NonNullable<GatewayOptions["media"]> | Error {
  const cap = env.RUDDER_ATTACHMENT_MAX_MB;
  const megabytes = cap === undefined || cap === "" ? undefined : Number(cap);
  if (megabytes !== undefined && !(Number.isFinite(megabytes) && megabytes > 0)) {
    return new Error(`RUDDER_ATTACHMENT_MAX_MB must be a positive number (got "${cap}")`);
  }
  const transcription = {
    url: env.RUDDER_TRANSCRIBE_URL || undefined,
    apiKey: env.RUDDER_TRANSCRIBE_API_KEY || undefined,
    model: env.RUDDER_TRANSCRIBE_MODEL || undefined,
    command: env.RUDDER_TRANSCRIBE_COMMAND || undefined,
  };
  return {
    ...(megabytes === undefined ? {} : { maxBytes: Math.floor(megabytes * 1024 * 1024) }),
    transcription,
  };
}
