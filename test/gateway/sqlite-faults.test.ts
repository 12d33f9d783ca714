/**
 * The SQLite store survives its faults as the PostgreSQL store does: while another process
 * holds gateway.db's lock, or the disk is full, the answer of a turn in flight is held and
 * stored once the fault ends (never dropped, stored once); new messages get a 503 with
 * `Retry-After` and the reason; health says the store is in trouble and why, at once (no
 * busy wait freezes the gateway); the fault and its end are logged once each.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { echoFallback, startFakeMessagesApi } from "../helpers/fake-messages-api.js";
import { outputMatching, runProcess, startProcess } from "../helpers/owned-process.js";
import { waitFor } from "../helpers/wait-for.js";
import { startRudderGateway, type TestGateway } from "./helpers.js";

const repository = join(import.meta.dirname, "..", "..");
const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A second process holding SQLite's write lock on `path` until `release()`. */
async function holdLock(path: string): Promise<{ release(): Promise<void> }> {
  const code = `
    const Database = require("better-sqlite3");
    const database = new Database(process.argv[1]);
    database.exec("BEGIN EXCLUSIVE");
    process.stdout.write("locked\\n");
    process.stdin.on("end", () => { database.exec("COMMIT"); database.close(); process.exit(0); });
    process.stdin.resume();`;
  const holder = startProcess(process.execPath, ["-e", code, path], {
    cwd: repository,
    stdin: "pipe",
  });
  cleanups.push(() => holder.kill());
  await outputMatching(holder, /locked/);
  return {
    release: async () => {
      holder.child.stdin?.end();
      await holder.exited;
    },
  };
}

/** A gateway on rudder agents whose first answer takes `delayMs`, with its log lines kept. */
async function gatewayWithSlowAnswer(dataDir?: string) {
  const api = await startFakeMessagesApi({
    // biome-ignore lint/suspicious/noThenProperty: the fake API names its delayed step so
    script: [{ delayMs: 2500, then: { text: "the held answer" } }],
    fallback: echoFallback,
  });
  cleanups.push(() => api.close());
  const workspace = mkdtempSync(join(tmpdir(), "rudder-sqlite-faults-"));
  cleanups.push(() => rmSync(workspace, { recursive: true, force: true }));
  const logs: string[] = [];
  const gateway: TestGateway = await startRudderGateway({
    prefix: "sqlite-faults",
    apiUrl: api.url,
    workspace,
    logger: (line) => logs.push(line),
    ...(dataDir ? { dataDir } : {}),
  });
  cleanups.push(() => gateway.cleanup());
  return { api, gateway, logs };
}

/** Health while the store is down: a 503 at once, naming the fault. */
async function healthSaysDown(gateway: TestGateway, reason: RegExp) {
  return waitFor(
    async () => {
      const started = performance.now();
      const response = await fetch(`${gateway.url}/api/health`);
      const tookMs = performance.now() - started;
      const body = (await response.json()) as { ok: boolean; store?: { error?: string } };
      if (response.status !== 503) return undefined;
      expect(tookMs).toBeLessThan(1000);
      expect(body.ok).toBe(false);
      expect(body.store?.error).toMatch(reason);
      expect(Number(response.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      return body;
    },
    "health to say the store is down",
    20_000,
  );
}

/** A new message while the store is down: a 503 with `Retry-After` and the reason. */
async function refusedWith(gateway: TestGateway, reason: RegExp) {
  const response = await fetch(`${gateway.url}/api/channels/other/messages`, {
    method: "POST",
    headers: { authorization: `Bearer ${gateway.token}`, "content-type": "application/json" },
    body: JSON.stringify({ text: "while down" }),
  });
  expect(response.status).toBe(503);
  expect(Number(response.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  expect(((await response.json()) as { error: string }).error).toMatch(reason);
}

/** The held answer stored once, after the fault, and each of its ends logged once. */
async function answeredOnceAfter(gateway: TestGateway, logs: string[], messageId: string) {
  const messages = await waitFor(
    async () => {
      const list = await gateway.messages("c");
      return list.find((message) => message.id === messageId)?.state === "answered"
        ? list
        : undefined;
    },
    "the held answer stored",
    30_000,
  );
  expect(messages.filter((message) => message.kind === "reply").map((m) => m.text)).toEqual([
    "the held answer",
  ]);
  expect((await fetch(`${gateway.url}/api/health`)).status).toBe(200);
  expect(logs.filter((line) => line.includes("store unavailable"))).toHaveLength(1);
  expect(logs.filter((line) => line.includes("store back"))).toHaveLength(1);
}

it("holds an answer while another process locks gateway.db, and stores it after", async () => {
  const { api, gateway, logs } = await gatewayWithSlowAnswer();
  const posted = await gateway.api<{ id: string }>("POST", "/api/channels/c/messages", {
    text: "one",
  });
  await api.waitForMainRequests(1, 20_000);
  const lock = await holdLock(join(gateway.dataDir, "gateway.db"));
  await healthSaysDown(gateway, /locked/);
  await refusedWith(gateway, /locked/);
  const [message] = await gateway.messages("c");
  expect(message?.state).toBe("received");
  await lock.release();
  await answeredOnceAfter(gateway, logs, posted.body.id);
}, 60_000);

const root = process.getuid?.() === 0;

it.runIf(root)(
  "holds an answer while the disk is full (a tmpfs), and stores it after",
  async () => {
    const mountPoint = mkdtempSync(join(tmpdir(), "rudder-full-disk-"));
    const mount = await runProcess("mount", ["-t", "tmpfs", "-o", "size=3m", "tmpfs", mountPoint]);
    expect(mount.code, mount.stderr).toBe(0);
    cleanups.push(async () => {
      await runProcess("umount", ["-l", mountPoint]);
      rmSync(mountPoint, { recursive: true, force: true });
    });
    const dataDir = join(mountPoint, "data");
    mkdirSync(dataDir);
    const { api, gateway, logs } = await gatewayWithSlowAnswer(dataDir);
    const posted = await gateway.api<{ id: string }>("POST", "/api/channels/c/messages", {
      text: "one",
    });
    await api.waitForMainRequests(1, 20_000);
    const filler = join(mountPoint, "filler");
    await fillDisk(filler);
    await healthSaysDown(gateway, /disk is full/);
    await refusedWith(gateway, /disk is full/);
    rmSync(filler);
    await answeredOnceAfter(gateway, logs, posted.body.id);
  },
  60_000,
);

if (!root) it.skip("holds an answer while the disk is full: needs root to mount a tmpfs", () => {});

/**
 * Appends to `path` until the file system has no room left, without holding the event loop: the
 * gateway runs in this process, and a synchronous fill (it rewrote the whole file per chunk) held
 * it 4-14 s under load, past the HTTP server's 5 s keep-alive, so the next request went out on a
 * socket the server then closed (`fetch failed`, ECONNRESET).
 */
async function fillDisk(path: string): Promise<void> {
  const chunk = Buffer.alloc(64 * 1024, 1);
  const file = await open(path, "w");
  try {
    for (let size = 0; size <= 64 * 1024 * 1024; size += chunk.length) {
      try {
        await file.write(chunk);
      } catch {
        return;
      }
    }
    throw new Error("the tmpfs never filled");
  } finally {
    await file.close();
  }
}
