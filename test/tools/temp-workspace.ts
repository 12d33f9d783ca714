import type { ToolContext } from "../../src/tools/types.js";
import { tempFolder } from "../helpers/temp-folders.js";

/** A fresh real directory under the OS temp dir, and a remover for afterEach/afterAll. */
export function makeWorkspace(label: string): { workspace: string; remove: () => void } {
  const { path, remove } = tempFolder(`rudder-${label}-`);
  return { workspace: path, remove };
}

export function contextFor(
  workspace: string,
  signal: AbortSignal = new AbortController().signal,
): ToolContext {
  return { workspace, signal };
}
