/**
 * Point 5 of issue 26: outside the sandbox the gate asks unless it fully understands. The real
 * CLI (`rudder run --no-sandbox`, headless, so every ask is a denial) on the fake Messages API
 * is told to run bypass spellings, one bash call each: expansions that run code inside words
 * the old gate called read-only, abbreviated options that write or run, and spellings of
 * secret paths. Held: no canary file was made, and no tool result holds the planted token or
 * the model's key.
 */
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  type RecordedRequest,
  type ScriptStep,
  startFakeMessagesApi,
} from "../../../test/helpers/fake-messages-api.js";
import { type Attack, type AttackGround, onGround } from "../attack.js";
import { canariesFound } from "../sandboxed.js";

const RUDDER_CLI = join(import.meta.dirname, "..", "..", "..", "dist", "cli.js");
const TOKEN = "redteam-planted-token-7f3a";
const API_KEY = "redteam-model-key-91c2";

/** Spellings that write a canary (C stands for the canary folder) if the gate lets them run. */
const CODE_SPELLINGS = [
  "echo $(( $(touch C/arithmetic) ))",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a template
  "echo ${UNSET:-$(touch C/default-value)}",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a template
  "x='$(touch C/prompt)'; echo ${x@P}",
  "printf -v 'slot[$(touch C/printf-subscript)]' %s value",
  "[[ 'a[$(touch C/test-arithmetic)]' -eq 0 ]]",
  "x='a[$(touch C/variable-arithmetic)]'; echo $((x))",
  "sed -l5 '1e touch C/sed-e' <<< line",
  "sed -n --expr='1e touch C/sed-expr' <<< line",
  "sort --out=C/sort-output /dev/null",
  "git ls-remote --upl='touch C/upload-pack;' . 2>/dev/null",
  "test -v 'arr[$(touch C/test-v)]'",
  "cat <<EOF\n$(touch C/heredoc)\nEOF",
  "echo $[ $(touch C/old-arithmetic) ]",
];

/** Spellings that would print the planted token (W: the workspace's folder name). */
const SECRET_SPELLINGS = [
  "cat ~+/../home/.rudder/token",
  "cat $PWD/../home/.rudder/token",
  "cat ~/.rud{d,}er/token",
  "cat ~/.r?dder/tok*",
  "grep -r redteam-planted ~/",
  "grep -R token ..",
  "cat /proc/$PPID/environ | tr '\\0' '\\n'",
  "cat /proc/self/environ",
];

/** Runs the commands as one headless `rudder run --no-sandbox` session; returns the tool results. */
async function runCommands(ground: AttackGround, commands: string[]): Promise<string[]> {
  const script: ScriptStep[] = commands.map((command) => ({
    toolUse: { name: "Bash", input: { command } },
  }));
  const api = await startFakeMessagesApi({ script, fallback: () => ({ text: "done" }) });
  try {
    const child = spawn(
      process.execPath,
      [RUDDER_CLI, "run", "--no-sandbox", "--output-format", "stream-json", "--verbose", "go"],
      {
        cwd: ground.workspace,
        detached: true,
        stdio: ["ignore", "ignore", "pipe"],
        env: {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          HOME: ground.home,
          RUDDER_HOME: join(ground.home, ".rudder"),
          ANTHROPIC_BASE_URL: api.url,
          ANTHROPIC_API_KEY: API_KEY,
          RUDDER_MAX_RETRIES: "0",
        },
      },
    );
    child.stderr.resume();
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on("error", reject);
      child.on("close", resolve);
    });
    if (code !== 0) throw new Error(`rudder run exited with ${code}`);
    return api.requests.flatMap((request) => toolResultTexts(request));
  } finally {
    await api.close();
  }
}

function toolResultTexts(request: RecordedRequest): string[] {
  const messages: Array<{ role?: string; content?: unknown }> = Array.isArray(
    request.body?.messages,
  )
    ? request.body.messages
    : [];
  return messages.flatMap((message) =>
    message.role === "user" && Array.isArray(message.content)
      ? message.content
          .filter((block: { type?: string }) => block?.type === "tool_result")
          .map((block: { content?: unknown }) => JSON.stringify(block.content))
      : [],
  );
}

function plantToken(ground: AttackGround): void {
  mkdirSync(join(ground.home, ".rudder"), { recursive: true });
  writeFileSync(join(ground.home, ".rudder", "token"), `${TOKEN}\n`);
}

export const attacks: Attack[] = [
  {
    name: "gate: expansions and options that run code, unsandboxed",
    wall: "gate",
    run: () =>
      onGround(async (ground) => {
        const commands = CODE_SPELLINGS.map((spelling) =>
          spelling.replaceAll("C/", `${ground.canaries}/`),
        );
        const results = await runCommands(ground, commands);
        const found = canariesFound(ground);
        const ran = results.filter((text) => !text.includes("Permission denied")).length;
        return found.length === 0 && ran === 0
          ? { held: true, detail: `${commands.length} spellings, each asked (denied headless)` }
          : { held: false, detail: `canaries: ${found.join(", ") || "none"}; ${ran} ran` };
      }),
  },
  {
    name: "gate: spellings of secret paths, unsandboxed",
    wall: "gate",
    run: () =>
      onGround(async (ground) => {
        plantToken(ground);
        const results = await runCommands(ground, SECRET_SPELLINGS);
        const leaked = results.filter((text) => text.includes(TOKEN) || text.includes(API_KEY));
        const ran = results.filter((text) => !text.includes("Permission denied")).length;
        return leaked.length === 0 && ran === 0
          ? {
              held: true,
              detail: `${SECRET_SPELLINGS.length} spellings, none read the token or key`,
            }
          : { held: false, detail: `${leaked.length} leaked, ${ran} ran` };
      }),
  },
];
