import { afterEach } from "vitest";
import type { AgentLoopDependencies } from "../../src/agent/agent-loop.js";
import type { AgentEvent } from "../../src/agent/events.js";
import { BackgroundManager } from "../../src/background/background-manager.js";
import type { Model } from "../../src/model/types.js";
import { emptyRules } from "../../src/permissions/types.js";
import { createDefaultTools } from "../../src/tools/default-tools.js";
import { tempFolder } from "../helpers/temp-folders.js";

const cleanups: Array<() => Promise<void> | void> = [];

/**
 * Removes the workspaces and stops the background managers made by the file's tests, after each
 * test. A file using `makeWorkspace` or `makeBackground` calls it once at its top (a module's own
 * hooks would be registered once per worker, and files share workers).
 */
export function cleanUpAfterEachTest(): void {
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
}

/** A real temporary workspace, removed after the test. */
export function makeWorkspace(): string {
  const { path, remove } = tempFolder("rudder-kernel-");
  cleanups.push(remove);
  return path;
}

/** A background manager whose tasks are killed after the test. */
export function makeBackground(workspace: string): BackgroundManager {
  const background = new BackgroundManager({ workspace });
  cleanups.push(() => background.stopAll());
  return background;
}

/** Loop dependencies over real tools in a real workspace, recording events. */
export function loopDependencies(
  model: Model,
  overrides: Partial<AgentLoopDependencies> = {},
): AgentLoopDependencies & { events: AgentEvent[]; background: BackgroundManager } {
  const workspace = overrides.workspace ?? makeWorkspace();
  const events: AgentEvent[] = [];
  const background = overrides.background ?? makeBackground(workspace);
  return {
    model,
    tools: createDefaultTools(),
    rules: emptyRules(),
    workspace,
    sessionId: "test-session",
    emit: (event) => events.push(event),
    signal: new AbortController().signal,
    ...overrides,
    background,
    events,
  };
}
