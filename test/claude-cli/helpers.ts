import { ClaudeProcess } from "../../src/claude-cli/claude-process.js";
import type { ClaudeProcessOptions } from "../../src/claude-cli/claude-process-types.js";
import { FAKE_CLAUDE } from "../helpers/fixtures.js";

/**
 * Makes ClaudeProcess instances wired to the fake CLI, each with its scenario in its own
 * environment overlay (mutable, like the seed's monkeypatched environment), and stops them all.
 */
export function fakeProcessFactory() {
  const created: ClaudeProcess[] = [];
  const make = (
    scenario: string,
    options: {
      channelId?: string;
      sessionIdEnv?: string;
      model?: string;
      extra?: Partial<ClaudeProcessOptions>;
    } = {},
  ) => {
    const env: Record<string, string | undefined> = {
      FAKE_CLAUDE_SCENARIO: scenario,
      FAKE_CLAUDE_SESSION_ID: options.sessionIdEnv ?? "fake-session-1",
      ...options.extra?.env,
    };
    const proc = new ClaudeProcess(options.channelId ?? "test-channel", {
      model: options.model ?? "sonnet",
      claudeBin: FAKE_CLAUDE,
      terminateGraceMs: 1000,
      ...options.extra,
      env,
    });
    created.push(proc);
    return proc;
  };
  const cleanup = async () => {
    await Promise.all(created.splice(0).map((proc) => proc.stop().catch(() => {})));
  };
  return { make, cleanup };
}
