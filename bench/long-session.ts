// A long conversation through rudder's stream-json child (`rudder run -p --input-format
// stream-json`, as the gateway drives it) against the loopback fake Messages API: 1,000 scripted
// turns (every tenth reads a file), twenty facts planted along the way, a 50,000-token window
// the fake enforces (a bigger request gets the API's 400). Then the same session with
// auto-compaction off and no window. Printed in one run: peak request / window, compactions,
// tokens sent per turn against the uncompacted session, the share of input served from the
// prompt cache, and how many facts the final request still carries.
// The fake's summarizer stands in for a model that follows rudder's summary prompt ("every
// instruction ... kept word for word"): its summary repeats each fact line the summarized
// request contains, earlier summaries included, and nothing else of the conversation.
// Run: npm run build && node --import tsx bench/long-session.ts
// (RUDDER_BENCH_TURNS=N for another length).
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import {
  lastUserText,
  type RecordedRequest,
  type ScriptStep,
  startFakeMessagesApi,
} from "../test/helpers/fake-messages-api.js";

const repositoryRoot = join(import.meta.dirname, "..");
const RUDDER_CLI = join(repositoryRoot, "dist", "cli.js");
const TURNS = Number(process.env.RUDDER_BENCH_TURNS ?? 1000);
const WINDOW = 50_000;
const FACTS = 20;

/** The scripted session's size: turns, the window the fake enforces, facts planted. */
export interface SessionShape {
  turns: number;
  window: number;
  facts: number;
}
const FACT_PATTERN = /FACT-\d\d: the code word for [a-z]+ is [a-z]+\./g;
const FILLER =
  "Notes on the build: the cache keys, the flaky step, the retry budget and the logs we keep. ";

const WORDS = ["heron", "maple", "quartz", "saffron", "tundra", "violet", "walnut", "zephyr"];
const THINGS = ["door", "vault", "cellar", "garden", "tower"];
const LETTERS = "abcdefghijklmnopqrstuvwxyz";

/** The fact planted at `turn`, if one is: FACT-01 halfway into the first turns/facts, and so on. */
function factAt(turn: number, shape: SessionShape): string | undefined {
  const every = Math.max(1, Math.floor(shape.turns / shape.facts));
  if (turn % every !== Math.floor(every / 2)) return undefined;
  const index = Math.floor(turn / every) + 1;
  if (index > shape.facts) return undefined;
  const thing = `${THINGS[index % THINGS.length]}${LETTERS[index]}`;
  const word = `${WORDS[index % WORDS.length]}${LETTERS[index + 1]}`;
  return `FACT-${String(index).padStart(2, "0")}: the code word for ${thing} is ${word}.`;
}

function userText(turn: number, shape: SessionShape): string {
  const fact = factAt(turn, shape);
  return `turn ${turn}: ${fact === undefined ? "" : `Please remember this. ${fact} `}${FILLER.repeat(3)}`;
}

const isSummaryRequest = (request: RecordedRequest) =>
  /write a summary of the whole conversation/i.test(lastUserText(request));

/** A file read, by the name the request's tools use (Claude Code's `Read` for hosts). */
function readCall(request: RecordedRequest, path: string): ScriptStep {
  const tools: Array<{ name?: string }> = request.body?.tools ?? [];
  return tools.some((tool) => tool.name === "Read")
    ? { toolUse: { name: "Read", input: { file_path: path } } }
    : { toolUse: { name: "read_file", input: { path } } };
}

/** The fake model: summaries keep the facts; every tenth turn reads a file first. */
function reply(request: RecordedRequest, workspace: string): ScriptStep {
  const body = JSON.stringify(request.body?.messages ?? []);
  if (isSummaryRequest(request)) {
    const facts = [...new Set(body.match(FACT_PATTERN) ?? [])];
    return {
      text: `<analysis>a</analysis>\n<summary>\nThe user is working through numbered turns of build notes.\n${facts.join("\n")}\n</summary>`,
    };
  }
  const messages: Array<{ content?: unknown }> = request.body?.messages ?? [];
  const last = JSON.stringify(messages.at(-1)?.content ?? "");
  const turn = Number(/turn (\d+):/.exec(lastUserText(request))?.[1] ?? -1);
  if (!last.includes("tool_result") && turn % 10 === 0) {
    return readCall(request, join(workspace, "notes", `note-${turn % 7}.txt`));
  }
  return { text: `Noted turn ${turn}. ${FILLER.repeat(2)}` };
}

export interface SessionFigures {
  turns: number;
  seconds: number;
  requests: number;
  peakTokens: number;
  sentTokens: number;
  overflows: number;
  compactions: number;
  inputTokens: number;
  cachedTokens: number;
  factsKept: number;
  failedTurns: number;
  /** Tool results of the file reads, and those among them that were errors. */
  fileReads: number;
  failedTools: number;
}

function userLine(text: string): string {
  return `${JSON.stringify({ type: "user", message: { role: "user", content: text }, parent_tool_use_id: null, session_id: "" })}\n`;
}

/** Sends each turn after the previous one's result; resolves when the child has ended. */
function converse(
  child: ChildProcess,
  shape: SessionShape,
  onLine: (line: Record<string, unknown>) => void,
) {
  let buffer = "";
  let turn = 1;
  child.stdin?.write(userLine(userText(turn, shape)));
  return new Promise<void>((resolve, reject) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      buffer += chunk.toString("utf8");
      for (let index = buffer.indexOf("\n"); index !== -1; index = buffer.indexOf("\n")) {
        const text = buffer.slice(0, index);
        buffer = buffer.slice(index + 1);
        if (text.trim() === "") continue;
        const line = JSON.parse(text) as Record<string, unknown>;
        onLine(line);
        if (line.type !== "result") continue;
        turn += 1;
        if (turn <= shape.turns) child.stdin?.write(userLine(userText(turn, shape)));
        else child.stdin?.end();
      }
    });
    child.on("error", reject);
    child.on("close", () => resolve());
  });
}

/**
 * One session of `shape` through the built CLI: with compaction in the window, or (`compacting`
 * false) with auto compaction off and no window at all. Never leaves the child running.
 */
export async function runSession(
  shape: SessionShape,
  compacting: boolean,
  scratch: string,
): Promise<SessionFigures> {
  const figures: SessionFigures = {
    turns: shape.turns,
    seconds: 0,
    requests: 0,
    peakTokens: 0,
    sentTokens: 0,
    overflows: 0,
    compactions: 0,
    inputTokens: 0,
    cachedTokens: 0,
    factsKept: 0,
    failedTurns: 0,
    fileReads: 0,
    failedTools: 0,
  };
  let lastBody = "";
  const home = mkdtempSync(join(scratch, compacting ? "compacting-" : "plain-"));
  const workspace = join(home, "workspace");
  const api = await startFakeMessagesApi({
    keepBodies: false,
    ...(compacting ? { contextWindow: shape.window } : {}),
    fallback: (request) => {
      figures.requests += 1;
      figures.sentTokens += request.tokens;
      figures.peakTokens = Math.max(figures.peakTokens, request.tokens);
      if (!isSummaryRequest(request)) lastBody = JSON.stringify(request.body);
      return reply(request, workspace);
    },
  });

  mkdirSync(join(workspace, "notes"), { recursive: true });
  for (let note = 0; note < 7; note++) {
    writeFileSync(
      join(workspace, "notes", `note-${note}.txt`),
      `note ${note}\n${FILLER.repeat(20)}`,
    );
  }
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [
      RUDDER_CLI,
      "run",
      "-p",
      "--input-format",
      "stream-json",
      "--output-format",
      "stream-json",
      "--verbose",
    ],
    {
      cwd: workspace,
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: home,
        TMPDIR: home,
        RUDDER_HOME: join(home, ".rudder"),
        ANTHROPIC_BASE_URL: api.url,
        ANTHROPIC_API_KEY: "dummy",
        RUDDER_MAX_RETRIES: "0",
        ...(compacting
          ? { RUDDER_CONTEXT_WINDOW: String(shape.window) }
          : { DISABLE_AUTO_COMPACT: "1" }),
      },
    },
  );
  child.stderr?.resume();
  try {
    await converse(child, shape, (line) => {
      if (line.type === "system" && line.subtype === "compact_boundary") figures.compactions += 1;
      if (line.type === "user") {
        const content = (line.message as { content?: unknown })?.content;
        for (const block of Array.isArray(content) ? content : []) {
          if (block?.type !== "tool_result") continue;
          figures.fileReads += 1;
          if (block.is_error === true) figures.failedTools += 1;
        }
      }
      if (line.type !== "result") return;
      if (line.is_error === true) figures.failedTurns += 1;
      const usage = (line.usage ?? {}) as Record<string, number>;
      const cached = usage.cache_read_input_tokens ?? 0;
      figures.cachedTokens += cached;
      figures.inputTokens +=
        (usage.input_tokens ?? 0) + cached + (usage.cache_creation_input_tokens ?? 0);
    });
  } finally {
    if (child.pid !== undefined && child.exitCode === null) {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
    await api.close();
  }
  figures.seconds = (performance.now() - started) / 1000;
  figures.overflows = api.requests.filter((request) => request.overflowed).length;
  figures.factsKept = new Set(lastBody.match(FACT_PATTERN) ?? []).size;
  return figures;
}

export async function main(): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), "rudder-bench-long-"));
  try {
    const shape = { turns: TURNS, window: WINDOW, facts: FACTS };
    const compacted = await runSession(shape, true, scratch);
    const plain = await runSession(shape, false, scratch);
    const perTurn = (figures: SessionFigures) => figures.sentTokens / figures.turns;
    process.stdout.write(
      `${TURNS} turns, a ${WINDOW.toLocaleString("en-US")}-token window, ${FACTS} facts planted:\n` +
        `  compacting: ${compacted.seconds.toFixed(1)} s, ${compacted.requests} requests, ` +
        `${compacted.compactions} compactions, ${compacted.overflows} refused as too long, ` +
        `${compacted.failedTurns} turns failed, ${compacted.fileReads} file reads (${compacted.failedTools} failed)\n` +
        `  no compaction, no window: ${plain.seconds.toFixed(1)} s, ${plain.requests} requests, ` +
        `peak request ${plain.peakTokens.toLocaleString("en-US")} tokens\n` +
        `peak request / window ${(compacted.peakTokens / WINDOW).toFixed(2)} (goal: below 1.0), ` +
        `compactions ${compacted.compactions}, ` +
        `tokens sent per turn ${(perTurn(compacted) / perTurn(plain)).toFixed(2)}x of the uncompacted session's ` +
        `(${Math.round(perTurn(compacted)).toLocaleString("en-US")} against ${Math.round(perTurn(plain)).toLocaleString("en-US")}), ` +
        `input served from cache ${((100 * compacted.cachedTokens) / Math.max(1, compacted.inputTokens)).toFixed(0)}% ` +
        `(uncompacted ${((100 * plain.cachedTokens) / Math.max(1, plain.inputTokens)).toFixed(0)}%), ` +
        `facts in the final request ${compacted.factsKept}/${FACTS} (goal: all)\n`,
    );
    const failed = [compacted, plain].some(
      (figures) => figures.overflows > 0 || figures.failedTurns > 0 || figures.failedTools > 0,
    );
    if (failed) process.exitCode = 1;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    process.stderr.write(
      `bench/long-session: ${error instanceof Error ? error.stack : String(error)}\n`,
    );
    process.exitCode = 1;
  });
}
