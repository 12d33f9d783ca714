import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { AgentSdk, QueryFunction } from "./agent-sdk-types.js";

function sdkEntry(): string {
  const installer = join(import.meta.dirname, "..", "..", "scripts", "install-agent-sdk.sh");
  return execFileSync("bash", [installer, "--print-path"], { encoding: "utf8" }).trim();
}

/**
 * The real Claude Agent SDK, from the copy scripts/install-agent-sdk.sh keeps in .cache/
 * (installing it on first use, hence the tests' long beforeAll timeout), with the zod its
 * tool schemas are written in (the SDK's own copy).
 */
export async function loadAgentSdk(): Promise<AgentSdk> {
  const entry = sdkEntry();
  const sdk = (await import(pathToFileURL(entry).href)) as Omit<AgentSdk, "z">;
  const zodEntry = join(entry, "..", "..", "..", "zod", "index.js");
  const zod = (await import(pathToFileURL(zodEntry).href)) as { z: AgentSdk["z"] };
  return { ...sdk, z: zod.z };
}

/** The real Claude Agent SDK's `query` (see `loadAgentSdk`). */
export async function loadAgentSdkQuery(): Promise<QueryFunction> {
  return (await loadAgentSdk()).query;
}
