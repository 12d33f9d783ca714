// What storing a channel's session file in the database costs per turn, as the conversation
// grows (src/gateway/transcripts/transcript-mirror.ts): `TURNS` turns each append `TURN_BYTES` of JSON lines
// to a session file, and the mirror saves after each turn, into SQLite and into a throwaway
// PostgreSQL (test/helpers/postgres-cluster.ts). Printed per store: the bytes stored per turn
// against the bytes the turn appended (goal 1.00x: only what was appended), and the time of a
// save in the last tenth of the turns against the first tenth (goal ~1x: a save's cost follows
// the turn, not the file; storing the whole file each turn would grow with it). Then one restore
// of the whole file on another "machine" (folder). Each store runs twice: with the gateway's
// merging of chunks (the newest run into one, past 32) and without, printing the rows a session ends with, the
// restore's time, and the bytes the merges wrote again (per turn, against what turns appended).
// Run: node --import tsx bench/transcripts.ts   (BENCH_TURNS default 1000, BENCH_TURN_BYTES 4096)
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { PostgresGatewayStore } from "../src/gateway/store/postgres/postgres-store.js";
import { SqliteGatewayStore } from "../src/gateway/store/sqlite/sqlite-store.js";
import type { GatewayStore } from "../src/gateway/store/store.js";
import { TranscriptMirror } from "../src/gateway/transcripts/transcript-mirror.js";
import { startPostgresCluster } from "../test/helpers/postgres-cluster.js";

const TURNS = Number(process.env.BENCH_TURNS ?? 1000);
const TURN_BYTES = Number(process.env.BENCH_TURN_BYTES ?? 4096);

function turnLines(turn: number): string {
  const filler = "x".repeat(Math.max(0, TURN_BYTES / 2 - 60));
  const user = JSON.stringify({ index: turn * 2, message: { role: "user", content: filler } });
  const reply = JSON.stringify({
    index: turn * 2 + 1,
    message: { role: "assistant", content: filler },
  });
  return `${user}\n${reply}\n`;
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const fixed = (value: number, digits = 2) => value.toFixed(digits);

/** The store, counting the bytes its merges write again (each merged chunk, whole). */
function countingMerges(store: GatewayStore): { store: GatewayStore; merged(): number } {
  let merged = 0;
  const counting = new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      if (property !== "compactTranscript") return value.bind(target);
      return async (sessionId: string, channelId: string, file?: string) => {
        const merge = await target.compactTranscript(sessionId, channelId, file);
        merged += merge?.bytes ?? 0;
        return merge;
      };
    },
  });
  return { store: counting, merged: () => merged };
}

async function measure(
  name: string,
  backing: GatewayStore,
  root: string,
  merging: boolean,
): Promise<void> {
  const label = `${name}, ${merging ? "merged past 32 chunks" : "never merged"}`;
  const folder = `${name}-${merging ? "merged" : "plain"}`;
  const here = join(root, folder, "a");
  const there = join(root, folder, "b");
  mkdirSync(here, { recursive: true });
  mkdirSync(there, { recursive: true });
  const sessionId = `bench-${folder}`;
  const file = join(here, `${sessionId}.jsonl`);
  writeFileSync(file, `${JSON.stringify({ type: "session", session_id: sessionId })}\n`);
  const { store, merged } = countingMerges(backing);
  const mirror = new TranscriptMirror({
    store,
    sessionFile: (id) => join(here, `${id}.jsonl`),
    ...(merging ? {} : { compactAfter: Number.POSITIVE_INFINITY }),
  });
  const times: number[] = [];
  let appended = 0;
  for (let turn = 0; turn < TURNS; turn++) {
    const lines = turnLines(turn);
    appendFileSync(file, lines);
    appended += Buffer.byteLength(lines);
    const started = performance.now();
    await mirror.flush("bench", sessionId);
    times.push(performance.now() - started);
  }
  const size = readFileSync(file).length;
  const stored = await store.transcriptLength(sessionId);
  const tenth = Math.max(1, Math.floor(TURNS / 10));
  // The second tenth, past the first statements' warm-up.
  const early = median(times.slice(tenth, 2 * tenth));
  const late = median(times.slice(-tenth));
  const header = size - appended;
  const storedPerTurn = (stored - header) / TURNS;
  // Storing the whole file after each turn instead: the sum of its sizes.
  const wholeEachTurn = header * TURNS + (appended / TURNS) * ((TURNS * (TURNS + 1)) / 2);
  const restorer = new TranscriptMirror({ store, sessionFile: (id) => join(there, `${id}.jsonl`) });
  const restoreStarted = performance.now();
  const restored = await restorer.restore("bench", sessionId);
  const restoreMs = performance.now() - restoreStarted;
  const same = readFileSync(join(there, `${sessionId}.jsonl`)).equals(readFileSync(file));
  const rows = (await store.transcriptFiles(sessionId))[0]?.chunks ?? 0;
  process.stdout.write(
    `${label}: ${TURNS} turns of ${TURN_BYTES} B, file ${fixed(size / 1e6, 1)} MB\n` +
      `  stored per turn ${fixed(storedPerTurn, 0)} B = ${fixed(storedPerTurn / (appended / TURNS))}x of what a turn appended (goal 1.00x); ` +
      `the whole file after each turn would store ${fixed(wholeEachTurn / (stored - header), 0)}x as much\n` +
      `  save: second tenth ${fixed(early, 3)} ms, last tenth ${fixed(late, 3)} ms = ${fixed(late / early)}x (goal ~1x)\n` +
      `  restore of the whole file elsewhere: ${fixed(restoreMs, 1)} ms (${restored.kind}, ${same ? "identical" : "DIFFERENT"}), reading ${rows} rows\n` +
      `  merges wrote ${fixed(merged() / TURNS, 0)} B per turn again = ${fixed(merged() / appended)}x of what turns appended\n`,
  );
  if (!same || stored !== size) process.exitCode = 1;
}

const root = mkdtempSync(join(tmpdir(), "rudder-bench-transcripts-"));
const cluster = await startPostgresCluster();
try {
  const sqlite = new SqliteGatewayStore(join(root, "gateway.db"));
  await measure("SQLite", sqlite, root, false);
  await measure("SQLite", sqlite, root, true);
  await sqlite.close();
  const postgres = await PostgresGatewayStore.open(
    await cluster.createDatabase("bench_transcripts"),
  );
  await measure("PostgreSQL", postgres, root, false);
  await measure("PostgreSQL", postgres, root, true);
  await postgres.close();
} finally {
  await cluster.destroy();
  rmSync(root, { recursive: true, force: true });
}
