import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { claudeCodeEnv } from "./test/helpers/claude-code-env.js";
import { startFakeMessagesApi } from "./test/helpers/fake-messages-api.js";

const bin = "/work/wt/steady2/.cache/claude-code/node_modules/.bin/claude";
const mode = process.argv[2] ?? "same";
const api = await startFakeMessagesApi({
  script: [
    { text: "first answer" },
    { toolUse: { name: "Bash", input: { command: "echo hi", description: "echo" } } },
    { hangUntilAborted: true, text: "working on it" },
    { text: "resumed answer" },
  ],
  fallback: (r) => ({ text: "fallback" }),
});
const home = mkdtempSync("/tmp/steady2-cc/home-");
const cwd = mkdtempSync("/tmp/steady2-cc/ws-");
const env = claudeCodeEnv(home, api.url);
function start(extra: string[]) {
  const child = spawn(
    bin,
    [
      "-p",
      "--input-format",
      "stream-json",
      "--output-format",
      "stream-json",
      "--verbose",
      "--permission-mode",
      "bypassPermissions",
      ...extra,
    ],
    { cwd, env, stdio: ["pipe", "pipe", "inherit"] },
  );
  const state = { out: "" };
  child.stdout.on("data", (d) => {
    state.out += d;
  });
  const send = (text: string) =>
    child.stdin.write(
      JSON.stringify({
        type: "user",
        message: { role: "user", content: text },
        parent_tool_use_id: null,
        session_id: "",
        uuid: crypto.randomUUID(),
      }) + "\n",
    );
  return { child, state, send };
}
const a = start([]);
a.send("hello one");
while (!a.state.out.includes('"type":"result"')) await new Promise((r) => setTimeout(r, 100));
a.send("second msg");
await api.waitForMainRequests(3, 30000);
await new Promise((r) => setTimeout(r, 500));
a.child.kill("SIGKILL");
const projects = join(home, ".claude", "projects");
const folder = readdirSync(projects)[0]!;
const session = readdirSync(join(projects, folder))
  .find((f) => f.endsWith(".jsonl"))!
  .replace(".jsonl", "");
const b = start(["--resume", session]);
b.send(
  mode === "same"
    ? "second msg"
    : "This session's worker process was restarted. If your previous turn was already complete, take no action and wait for the next event. Otherwise, continue from where you left off.",
);
while (!b.state.out.includes('"type":"result"')) await new Promise((r) => setTimeout(r, 100));
const last = api.mainRequests().at(-1)!;
console.log(
  JSON.stringify(
    last.body.messages.map((m: any) => [
      m.role,
      typeof m.content === "string"
        ? m.content
        : m.content.map((c: any) => (c.type === "text" ? c.text.slice(0, 80) : c.type)),
    ]),
    null,
    0,
  ),
);
console.log(
  b.state.out
    .split("\n")
    .filter((l) => l.includes('"result"'))
    .map((l) => JSON.parse(l).result),
);
b.child.kill();
await api.close();
process.exit(0);
