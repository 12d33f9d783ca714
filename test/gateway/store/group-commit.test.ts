import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { GroupCommit } from "../../../src/gateway/store/sqlite/group-commit.js";
import { SqliteGatewayStore } from "../../../src/gateway/store/sqlite/sqlite-store.js";

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function databasePath(): string {
  const folder = mkdtempSync(join(tmpdir(), "rudder-group-commit-"));
  folders.push(folder);
  return join(folder, "gateway.db");
}

/** What another connection (another process, after a crash) reads: only what is committed. */
function committedMessages(path: string): string[] {
  const reader = new Database(path, { readonly: true });
  try {
    const rows = reader.prepare("SELECT text FROM messages ORDER BY seq").all() as Array<{
      text: string;
    }>;
    return rows.map((row) => row.text);
  } finally {
    reader.close();
  }
}

describe("the SQLite store's group commit", () => {
  it("commits the writes of one loop turn together, before any of them resolves", async () => {
    const path = databasePath();
    const store = new SqliteGatewayStore(path);
    let resolvedBeforeCommit = false;
    const first = store.insertUserMessage("a", "one", "http").then((message) => {
      resolvedBeforeCommit ||= !committedMessages(path).includes("one");
      return message;
    });
    const second = store.insertUserMessage("b", "two", "http");
    // Issued, not committed yet: a crash now would lose both, and neither has resolved.
    expect(committedMessages(path)).toEqual([]);
    // The writing connection itself reads them already.
    expect((await store.listMessages("a")).map((message) => message.text)).toEqual(["one"]);
    await Promise.all([first, second]);
    expect(resolvedBeforeCommit).toBe(false);
    expect(committedMessages(path)).toEqual(["one", "two"]);
    await store.close();
  });

  it("commits every 16 writes even within one loop turn, so a burst's first are answered early", async () => {
    const path = databasePath();
    const store = new SqliteGatewayStore(path);
    const texts = Array.from({ length: 17 }, (_, index) => `burst ${index}`);
    const writes = texts.map((text, index) => store.insertUserMessage(`c-${index}`, text, "http"));
    // The 17th write committed the 16 before it; it waits for the loop's turn to end.
    expect(committedMessages(path)).toEqual(texts.slice(0, 16));
    await Promise.all(writes);
    expect(committedMessages(path)).toEqual(texts);
    await store.close();
  });

  it("commits what is open at once when asked (before the gateway writes to an agent)", async () => {
    const path = databasePath();
    const store = new SqliteGatewayStore(path);
    const message = await store.insertUserMessage("a", "one", "http");
    const attempts = () => {
      const reader = new Database(path, { readonly: true });
      try {
        const row = reader.prepare("SELECT attempts FROM messages WHERE id = ?").get(message.id);
        return (row as { attempts: number }).attempts;
      } finally {
        reader.close();
      }
    };
    const counted = store.countStarted(message.id, "run-1");
    // Issued, not committed: it would go with the rest of this loop turn's writes.
    expect(attempts()).toBe(0);
    store.commitPending();
    // No await: committed by the time the call returns.
    expect(attempts()).toBe(1);
    await counted;
    await store.close();
  });

  it("fails only the write that failed; the others of its turn are committed", async () => {
    const path = databasePath();
    const database = new Database(path);
    database.pragma("journal_mode = WAL");
    database.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)");
    const commits = new GroupCommit(database);
    const insert = database.prepare("INSERT INTO t (id, v) VALUES (?, ?)");
    const results = await Promise.allSettled([
      commits.write(() => insert.run(1, "a")),
      commits.write(() => insert.run(1, "duplicate")),
      commits.write(() => insert.run(2, "b")),
    ]);
    expect(results.map((result) => result.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    database.close();
    const reader = new Database(path, { readonly: true });
    expect(reader.prepare("SELECT v FROM t ORDER BY id").all()).toEqual([{ v: "a" }, { v: "b" }]);
    reader.close();
  });

  it("commits what is open when the store closes", async () => {
    const path = databasePath();
    const store = new SqliteGatewayStore(path);
    const pending = store.insertUserMessage("a", "last words", "http");
    await store.close();
    await expect(pending).resolves.toMatchObject({ text: "last words" });
    expect(committedMessages(path)).toEqual(["last words"]);
  });
});
