/**
 * Voice notes to text: an OpenAI-compatible `/audio/transcriptions` endpoint (multipart `file`
 * and `model`, answered with `{text}`), or a local command (whisper.cpp, say) run in the
 * workspace with the file's path as its last argument, its standard output the transcript.
 * Either is given a time limit; a failure is a result with one line, never a rejection.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import type { InboundFile } from "../channel-source.js";

export interface TranscriptionOptions {
  /** An OpenAI-compatible `.../audio/transcriptions` URL. */
  url?: string | undefined;
  /** Sent as `Authorization: Bearer <key>` to the URL. */
  apiKey?: string | undefined;
  /** The endpoint's model (default `whisper-1`). */
  model?: string | undefined;
  /** A shell command; the audio file's absolute path is appended as its last argument. */
  command?: string | undefined;
  /** Default 2 minutes. */
  timeoutMs?: number | undefined;
}

export type Transcript = { ok: true; text: string } | { ok: false; error: string };

export interface Transcriber {
  transcribe(
    workspace: string,
    path: string,
    file: InboundFile,
    signal: AbortSignal,
  ): Promise<Transcript>;
}

const STDOUT_LIMIT = 1024 * 1024;

/** The transcriber the options describe, or undefined when neither URL nor command is set. */
export function createTranscriber(options: TranscriptionOptions): Transcriber | undefined {
  const { url, command } = options;
  if (!url && !command) return undefined;
  const timeoutMs = options.timeoutMs ?? 120_000;
  return {
    async transcribe(workspace, path, file, signal) {
      const limited = AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]);
      try {
        const text = url
          ? await viaEndpoint(url, options, path, file, limited)
          : await viaCommand(command as string, workspace, join(workspace, path), limited);
        const trimmed = text.trim();
        return trimmed === ""
          ? { ok: false, error: "an empty transcript" }
          : { ok: true, text: trimmed };
      } catch (error) {
        const why = limited.aborted && !signal.aborted ? "it took too long" : describe(error);
        return { ok: false, error: why };
      }
    },
  };
}

async function viaEndpoint(
  url: string,
  options: TranscriptionOptions,
  path: string,
  file: InboundFile,
  signal: AbortSignal,
): Promise<string> {
  const form = new FormData();
  const blob = new Blob([new Uint8Array(file.data)], {
    type: file.mediaType ?? "application/octet-stream",
  });
  form.append("file", blob, path.split("/").pop() ?? "voice-note");
  form.append("model", options.model ?? "whisper-1");
  const response = await fetch(url, {
    method: "POST",
    body: form,
    signal,
    headers: options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {},
  });
  const body = await response.text();
  if (!response.ok)
    throw new Error(`the endpoint answered ${response.status}: ${body.slice(0, 200)}`);
  const parsed = JSON.parse(body) as { text?: unknown };
  if (typeof parsed.text !== "string") throw new Error("the endpoint's answer has no text");
  return parsed.text;
}

/** Runs `command <file>` in its own process group, killed on abort; resolves to its stdout. */
function viaCommand(
  command: string,
  workspace: string,
  file: string,
  signal: AbortSignal,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", `${command} "$1"`, "sh", file], {
      cwd: workspace,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      if (stdout.length < STDOUT_LIMIT) stdout += chunk.toString("utf8");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-2000);
    });
    const kill = () => {
      if (child.pid !== undefined && child.exitCode === null) {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          // Gone already.
        }
      }
    };
    signal.addEventListener("abort", kill, { once: true });
    child.on("error", (error) => {
      signal.removeEventListener("abort", kill);
      reject(error);
    });
    child.on("close", (code) => {
      signal.removeEventListener("abort", kill);
      if (signal.aborted) reject(new Error("stopped"));
      else if (code === 0) resolve(stdout);
      else {
        const last = stderr.trim().split("\n").pop() ?? "";
        reject(new Error(`the command exited with ${code}${last ? `: ${last}` : ""}`));
      }
    });
  });
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
