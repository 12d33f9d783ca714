/**
 * The SQLite store's faults under load: messages posted every 50 ms over several channels while
 * another process holds gateway.db's write lock, or while the disk is full (a tmpfs, root
 * only), for `faultSeconds`. The client acts as a client should: a 503 is sent again after its
 * `Retry-After`. Counts: accepted, refused with 503 and `Retry-After`, any other failure (a
 * bare 500), lost (accepted, never answered), stuck (not answered within `boundSeconds` of the
 * fault's end), answered twice, the slowest health answer during the fault, and the log lines
 * of the fault and its end (one each).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ApiMessage } from "../../test/gateway/helpers.js";
import { GatewayProcess } from "../gateway-process.js";
import { type Figure, figure, poll } from "./figures.js";

const repository = join(import.meta.dirname, "..", "..");
const FAKE_CLAUDE = join(repository, "test", "fixtures", "fake-claude");

export interface SqliteFaultOptions {
  root: string;
  channels: number;
  faultSeconds: number;
  /** How long after the fault every accepted message must be answered. */
  boundSeconds: number;
}

interface Fault {
  name: string;
  /** Prepares the data folder; returns it. */
  prepare(root: string): string;
  begin(dataDir: string): Promise<void>;
  end(): Promise<void>;
  cleanup(): void;
}

/** Another process holding SQLite's write lock (`BEGIN EXCLUSIVE`) on gateway.db. */
export function lockFault(): Fault {
  let holder: ChildProcess | undefined;
  return {
    name: "SQLite locked by another process",
    prepare: (root) => join(root, "sqlite-lock"),
    begin: async (dataDir) => {
      const code = `const Database = require("better-sqlite3");
        const database = new Database(process.argv[1]);
        database.exec("BEGIN EXCLUSIVE");
        process.stdout.write("locked\\n");
        process.stdin.on("end", () => { database.exec("COMMIT"); process.exit(0); });
        process.stdin.resume();`;
      holder = spawn(process.execPath, ["-e", code, join(dataDir, "gateway.db")], {
        cwd: repository,
        stdio: ["pipe", "pipe", "inherit"],
      });
      await new Promise<void>((resolve) => holder?.stdout?.once("data", () => resolve()));
    },
    end: async () => {
      const exited = new Promise((resolve) => holder?.once("exit", resolve));
      holder?.stdin?.end();
      await exited;
    },
    cleanup: () => holder?.kill("SIGKILL"),
  };
}

/** A 20 MB tmpfs as the data folder, filled up by another file for the fault. */
export function diskFullFault(): Fault {
  let mountPoint = "";
  return {
    name: "SQLite disk full (20 MB tmpfs)",
    prepare: (root) => {
      mountPoint = mkdtempSync(join(root, "sqlite-full-"));
      const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", "size=20m", "tmpfs", mountPoint]);
      if (mounted.status !== 0) throw new Error(`mount failed: ${mounted.stderr}`);
      mkdirSync(join(mountPoint, "data"));
      return join(mountPoint, "data");
    },
    begin: async () => {
      const filler = join(mountPoint, "filler");
      const chunk = Buffer.alloc(1024 * 1024, 1);
      for (let megabytes = 1; megabytes < 64; megabytes += 1) {
        try {
          writeFileSync(filler, Buffer.concat(Array.from({ length: megabytes }, () => chunk)));
        } catch {
          return;
        }
      }
    },
    end: async () => rmSync(join(mountPoint, "filler"), { force: true }),
    cleanup: () => {
      spawnSync("umount", ["-l", mountPoint]);
      rmSync(mountPoint, { recursive: true, force: true });
    },
  };
}

export async function sqliteFault(fault: Fault, options: SqliteFaultOptions): Promise<Figure[]> {
  const dataDir = fault.prepare(options.root);
  const gateway = await GatewayProcess.start({
    dataDir,
    port: 0,
    engine: { claudeBin: FAKE_CLAUDE, env: { FAKE_CLAUDE_REPLY_DELAY_MS: "400" } },
  });
  const logs: string[] = [];
  gateway.child.stderr?.on("data", (chunk: Buffer) => logs.push(...chunk.toString().split("\n")));
  const counts = { accepted: 0, refused: 0, failed: 0 };
  const failures = new Set<string>();
  const accepted: Array<{ channel: string; text: string }> = [];
  const sends: Promise<void>[] = [];
  const send = async (channel: string, text: string): Promise<void> => {
    for (;;) {
      const response = await fetch(`${gateway.url}/api/channels/${channel}/messages`, {
        method: "POST",
        headers: { authorization: `Bearer ${gateway.token}`, "content-type": "application/json" },
        body: JSON.stringify({ text }),
      }).catch(() => undefined);
      if (response === undefined) {
        // A keep-alive connection closed as it was reused (or the gateway away): sent again.
        await new Promise((resolve) => setTimeout(resolve, 200));
        continue;
      }
      if (response.status === 202) {
        counts.accepted += 1;
        accepted.push({ channel, text });
        return;
      }
      const retryAfter = Number(response.headers.get("retry-after"));
      if (response.status !== 503 || !(retryAfter >= 1)) {
        counts.failed += 1;
        const said = `${response.status} ${await response.text()}`;
        failures.add(said.slice(0, 160));
        return;
      }
      counts.refused += 1;
      await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
    }
  };
  let index = 0;
  const load = async (untilMs: number) => {
    while (Date.now() < untilMs) {
      const text = `message m${String(index).padStart(5, "0")}.`;
      sends.push(send(`fault-${index % options.channels}`, text));
      index += 1;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  let slowestHealthMs = 0;
  let healthSaidDown = false;
  try {
    await load(Date.now() + 2000);
    await fault.begin(dataDir);
    const faultEnds = Date.now() + options.faultSeconds * 1000;
    const probing = (async () => {
      while (Date.now() < faultEnds) {
        const started = performance.now();
        // A keep-alive connection the server closed as it was reused is sent again, as any
        // client does; it is not the gateway failing.
        const response = await fetch(`${gateway.url}/api/health`).catch(() => undefined);
        if (response === undefined) continue;
        slowestHealthMs = Math.max(slowestHealthMs, performance.now() - started);
        const body = (await response.json()) as { store?: { ok: boolean } };
        if (response.status === 503 && body.store?.ok === false) healthSaidDown = true;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })();
    await load(faultEnds);
    await probing;
    await fault.end();
    const ended = Date.now();
    await load(Date.now() + 2000);
    await Promise.all(sends);
    const unanswered = async () => {
      const answered = new Map<string, number>();
      for (let channel = 0; channel < options.channels; channel += 1) {
        const { body } = await gateway.api<{ messages: ApiMessage[] }>(
          "GET",
          `/api/channels/fault-${channel}/messages`,
        );
        for (const reply of body.messages.filter((message) => message.kind === "reply")) {
          const text = /message m\d{5}\./.exec(reply.text)?.[0] ?? "";
          answered.set(text, (answered.get(text) ?? 0) + 1);
        }
      }
      return { answered, open: accepted.filter((each) => !answered.has(each.text)).length };
    };
    const bound = ended + options.boundSeconds * 1000;
    await poll(async () => (await unanswered()).open === 0, Math.max(0, bound - Date.now()));
    const stuck = (await unanswered()).open;
    await poll(async () => (await unanswered()).open === 0, 30_000);
    const final = await unanswered();
    const twice = [...final.answered.values()].filter((count) => count > 1).length;
    const faults = logs.filter((line) => line.includes("store unavailable")).length;
    const backs = logs.filter((line) => line.includes("store back")).length;
    const scenario = `${fault.name}, ${options.faultSeconds} s`;
    return [
      figure(scenario, "accepted (202)", counts.accepted),
      figure(scenario, "refused with 503 + Retry-After (sent again)", counts.refused),
      figure(
        scenario,
        "other failures (bare 500, no Retry-After)",
        counts.failed,
        "0",
        counts.failed === 0,
      ),
      figure(scenario, "lost", final.open, "0", final.open === 0),
      figure(
        scenario,
        `stuck past ${options.boundSeconds} s after the fault`,
        stuck,
        "0",
        stuck === 0,
      ),
      figure(scenario, "answered twice", twice, "0", twice === 0),
      figure(
        scenario,
        "health said the store is down",
        healthSaidDown ? "yes" : "no",
        "yes",
        healthSaidDown,
      ),
      figure(
        scenario,
        "slowest health during the fault",
        `${slowestHealthMs.toFixed(0)} ms`,
        "< 1000 ms",
        slowestHealthMs < 1000,
      ),
      figure(
        scenario,
        "log lines: fault / its end",
        `${faults} / ${backs}`,
        "1 / 1",
        faults === 1 && backs === 1,
      ),
    ];
  } finally {
    await gateway.stop();
    fault.cleanup();
  }
}
