import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ToolContext } from "../../src/tools/types.js";

/** A fresh real directory under the OS temp dir, and a remover for afterEach/afterAll. */
export function makeWorkspace(label: string): { workspace: string; remove: () => void } {
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), `rudder-${label}-`)));
  return { workspace, remove: () => rmSync(workspace, { recursive: true, force: true }) };
}

export function contextFor(
  workspace: string,
  signal: AbortSignal = new AbortController().signal,
): ToolContext {
  return { workspace, signal };
}
