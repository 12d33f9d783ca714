/**
 * `rudder serve --engine claude` hides the gateway's data folder from the real Claude Code CLI
 * (2.1.328, against the fake Messages API): the engine `rudder serve` builds runs it inside
 * bubblewrap with the folder covered (src/cli/data-folder-wrapper.ts), so neither its Bash tool
 * nor its Read tool finds the token or `gateway.db`, while the workspace works as before.
 */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { dataFolderWrapper } from "../../src/cli/data-folder-wrapper.js";
import { gatewayEngine } from "../../src/cli/gateway-engine.js";
import { findExecutable } from "../../src/sandbox/bubblewrap-probe.js";
import { claudeCodeBinary } from "../helpers/claude-code-env.js";
import { lastToolResults, startFakeMessagesApi } from "../helpers/fake-messages-api.js";
import { waitFor } from "../helpers/wait-for.js";
import { startTestGateway, type TestGateway } from "./helpers.js";

const NO_BUBBLEWRAP = findExecutable("bwrap", process.env.PATH) === undefined;
let claudeBin = "";
let root = "";
let gateway: TestGateway | undefined;

beforeAll(() => {
  claudeBin = claudeCodeBinary();
  // Outside /tmp, so that nothing is hidden for the wrong reason.
  root = realpathSync(mkdtempSync("/var/tmp/rudder-claude-data-"));
  for (const folder of ["home", "tmp", "workspace"]) mkdirSync(join(root, folder));
}, 300_000);

afterAll(async () => {
  await gateway?.cleanup();
  rmSync(root, { recursive: true, force: true });
});

it.skipIf(NO_BUBBLEWRAP)(
  "keeps the gateway's token and database out of Claude Code's tools",
  async () => {
    const dataDir = join(root, "data");
    const workspace = join(root, "workspace");
    const api = await startFakeMessagesApi({
      script: [
        {
          toolUse: {
            name: "Bash",
            input: {
              command: `cat ${dataDir}/token; ls -a ${dataDir}; echo made > made.txt && cat made.txt`,
              description: "look around",
            },
          },
        },
        { toolUse: { name: "Read", input: { file_path: join(dataDir, "token") } } },
        { text: "Looked." },
      ],
    });
    try {
      const env = {
        ...process.env,
        RUDDER_CLAUDE_BIN: claudeBin,
      };
      const engine = gatewayEngine("claude", {
        cwd: workspace,
        model: undefined,
        noSandbox: false,
        env,
        wrapper: await dataFolderWrapper(dataDir, env),
      });
      // The default: Claude Code inside bubblewrap, owned by a watcher (bubblewrap-owned.test.ts).
      expect(engine.claudeBin.endsWith("/bwrap")).toBe(true);
      expect(engine.owned).toEqual({ ignoreTerm: true, graceMs: 2000 });
      gateway = await startTestGateway({
        prefix: "claude-data",
        dataDir,
        engine: {
          ...engine,
          args: [...(engine.args ?? []), "--permission-mode", "bypassPermissions"],
          env: {
            ANTHROPIC_BASE_URL: api.url,
            ANTHROPIC_API_KEY: "dummy",
            DISABLE_TELEMETRY: "1",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
            DISABLE_AUTOUPDATER: "1",
            IS_SANDBOX: "1",
            HOME: join(root, "home"),
            CLAUDE_CONFIG_DIR: join(root, "home", ".claude"),
            TMPDIR: join(root, "tmp"),
            CLAUDE_CODE_TMPDIR: join(root, "tmp"),
          },
        },
        permissionPrompts: false,
      });
      const token = readFileSync(join(dataDir, "token"), "utf8").trim();
      expect(token.length).toBeGreaterThan(10);
      await gateway.api("POST", "/api/channels/cc/messages", { text: "look around" });
      await waitFor(
        async () => (await gateway?.messages("cc"))?.some((message) => message.kind === "reply"),
        "the reply",
        90_000,
      );
      const results = api
        .mainRequests()
        .flatMap((request) => lastToolResults(request))
        .map((result) => JSON.stringify(result));
      expect(results).toHaveLength(2);
      const [bash, read] = results;
      expect(bash).toContain("made");
      expect(bash).not.toContain("gateway.db");
      expect(read).not.toContain(token);
      expect(results.join("\n")).not.toContain(token);
      expect(readFileSync(join(workspace, "made.txt"), "utf8")).toBe("made\n");
    } finally {
      await api.close();
    }
  },
  120_000,
);
