/**
 * The whole bypass corpus (test/permissions/corpus/bypasses.txt) run for real in the sandbox,
 * through the dispatch path `rudder run` uses (the gate, then the bash tool): every command but
 * the deny list runs, against a folder outside the workspace and outside /tmp, and a canary in
 * it must outlive each one. test/permissions/corpus-run.test.ts runs a sample of it; this runs
 * every line (a few hundred sandboxed commands, about a minute).
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type DispatchContext, dispatchToolUse } from "../../../src/agent/tool-dispatch.js";
import { loadBashParser } from "../../../src/permissions/bash-parser.js";
import { emptyRules } from "../../../src/permissions/types.js";
import { createBashTool } from "../../../src/tools/bash-tool.js";
import { readCorpus } from "../../../test/permissions/corpus.js";
import { type Attack, onGround } from "../attack.js";
import { noBubblewrap, sandboxSession } from "../sandboxed.js";

export const attacks: Attack[] = [
  {
    name: "files: every command of the bypass corpus, run in the sandbox",
    wall: "files",
    skip: noBubblewrap,
    run: () =>
      onGround(async (ground) => {
        await loadBashParser();
        const session = sandboxSession(ground);
        const target = join(ground.canaries, "target");
        const canary = join(target, "canary");
        const context = (): DispatchContext => ({
          tools: [createBashTool({ sandbox: session.sandbox })],
          rules: emptyRules(),
          workspace: ground.workspace,
          home: ground.home,
          bashSandboxed: (command) => session.sandbox.confines(command),
          sessionId: "redteam-corpus",
          emit: () => {},
          signal: AbortSignal.timeout(120_000),
        });
        const failures: string[] = [];
        let ran = 0;
        try {
          for (const entry of readCorpus("bypasses")) {
            const command = entry.command.replaceAll("SCRATCH", target);
            rmSync(target, { recursive: true, force: true });
            mkdirSync(target, { recursive: true });
            writeFileSync(canary, "still here\n");
            const block = {
              type: "tool_use" as const,
              id: "corpus",
              name: "bash",
              input: { command, timeout: 10_000 },
            };
            const result = await dispatchToolUse(block, context());
            const content = String(result.content);
            const denied = content.startsWith("Permission denied");
            if (denied !== (entry.on === "deny")) {
              failures.push(
                `line ${entry.line}: ${denied ? "denied" : "ran"}, expected ${entry.on}`,
              );
            }
            if (content.includes("sandbox cannot start"))
              failures.push(`line ${entry.line}: no sandbox`);
            if (!denied) ran += 1;
            if (!existsSync(canary)) failures.push(`line ${entry.line}: the canary is gone`);
          }
        } finally {
          session.close();
        }
        return {
          held: failures.length === 0,
          detail:
            failures.length === 0
              ? `${ran} commands ran in the sandbox; the canary outlived each`
              : failures.slice(0, 5).join("; "),
        };
      }),
  },
];
