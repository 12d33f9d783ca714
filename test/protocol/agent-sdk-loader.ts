import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { QueryFunction } from "./agent-sdk-types.js";

/**
 * The real Claude Agent SDK's `query`, from the copy scripts/install-agent-sdk.sh keeps in
 * .cache/ (installing it on first use, hence the tests' long beforeAll timeout).
 */
export async function loadAgentSdkQuery(): Promise<QueryFunction> {
  const installer = join(import.meta.dirname, "..", "..", "scripts", "install-agent-sdk.sh");
  const entry = execFileSync("bash", [installer, "--print-path"], { encoding: "utf8" }).trim();
  return ((await import(pathToFileURL(entry).href)) as { query: QueryFunction }).query;
}
