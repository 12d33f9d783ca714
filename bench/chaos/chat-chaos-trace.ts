/**
 * What the chat chaos scenario (`chat-chaos.ts`) tells about a message never answered, so a run
 * that loses one says why: when it was said (which life of the gateway, up or down), its
 * delivery key, whether the gateway's store took it (the claim of its key, the user message and
 * its state), the answers stored to it and their reply-ledger entries, what the platform's fake
 * holds of that place, and the gateway's log lines naming its channel or key.
 */
import { existsSync } from "node:fs";
import Database from "better-sqlite3";

/** When and how a message was said, as the scenario and the platform's fake saw it. */
export interface SaidMessage {
  conversation: number;
  index: number;
  marker: string;
  /** Milliseconds since the scenario started, and the clock's time then. */
  at: number;
  time: number;
  /** The gateway's life (1 the first) and whether it was up (not killed, or ready again). */
  life: number;
  up: boolean;
  /** The platform's id of the message, which the kit claims in the store. */
  key?: string | undefined;
  /** Whether a live connection of the gateway was there to hear it (platforms with one). */
  heard?: boolean | undefined;
  /** The fake's place the answers go to (a thread, a DM). */
  place?: string | undefined;
}

/** The store's record of one message: its rows, as lines. */
function storeLines(database: Database.Database, said: SaidMessage, source: string): string[] {
  const lines: string[] = [];
  if (said.key !== undefined) {
    const claim = database
      .prepare("SELECT * FROM inbound_deliveries WHERE source = ? AND delivery_key = ?")
      .get(source, said.key) as { created_at: string; finished_at: string | null } | undefined;
    lines.push(
      claim
        ? `  claim: taken ${claim.created_at}, finished ${claim.finished_at ?? "never"}`
        : "  claim: none (the gateway never claimed its key)",
    );
  }
  const users = database
    .prepare(
      "SELECT id, channel_id, state, attempts, created_at FROM messages WHERE role = 'user' AND text LIKE ?",
    )
    .all(`%${said.marker}%`) as Array<Record<string, unknown>>;
  if (users.length === 0) lines.push("  stored: no user message holds it");
  for (const user of users) {
    lines.push(
      `  stored: ${user.id} in ${user.channel_id}, state ${user.state}, ${user.attempts} attempt(s), at ${user.created_at}`,
    );
    const answers = database
      .prepare("SELECT id, kind, state, created_at, text FROM messages WHERE reply_to = ?")
      .all(user.id) as Array<Record<string, unknown>>;
    if (answers.length === 0) lines.push("    answer: none stored");
    for (const answer of answers) {
      lines.push(
        `    answer: ${answer.id} ${answer.kind} at ${answer.created_at}: ${String(answer.text).slice(0, 80)}`,
      );
      const entries = database
        .prepare(
          "SELECT id, kind, state, attempts, platform_id, may_repeat, created_at FROM outbound WHERE origin = ? OR origin LIKE ?",
        )
        .all(answer.id, `${answer.id}#%`) as Array<Record<string, unknown>>;
      if (entries.length === 0) lines.push("      ledger: no entry carries it");
      for (const entry of entries) {
        lines.push(
          `      ledger: ${entry.id} ${entry.kind} ${entry.state}, ${entry.attempts} attempt(s), platform id ${entry.platform_id ?? "none"}, may repeat ${entry.may_repeat}, at ${entry.created_at}`,
        );
      }
    }
    const ledger = database
      .prepare(
        "SELECT count(*) AS entries, min(created_at) AS first FROM outbound WHERE channel_id = ?",
      )
      .get(user.channel_id) as { entries: number; first: string | null };
    lines.push(
      `    channel's ledger: ${ledger.entries} entries, first at ${ledger.first ?? "none"}`,
    );
  }
  return lines;
}

/**
 * The story of each message never answered, in lines: how it was said, the store's rows (read
 * from `databasePath` after the gateway stopped), the fake's lines and the logs naming it.
 */
export function traceLost(
  lost: readonly SaidMessage[],
  options: {
    databasePath: string;
    source: string;
    logs: string;
    fake?: (said: SaidMessage) => string[];
  },
): string[] {
  if (lost.length === 0) return [];
  const database = existsSync(options.databasePath)
    ? new Database(options.databasePath, { readonly: true, fileMustExist: true })
    : undefined;
  const lines: string[] = [];
  try {
    for (const said of lost) {
      lines.push(
        `lost ${said.marker} (conversation ${said.conversation}, message ${said.index}): said at ${said.at} ms (${new Date(said.time).toISOString()}) in life ${said.life} (${said.up ? "up" : "down"})${said.heard === undefined ? "" : said.heard ? ", a live connection heard it" : ", no live connection"}, key ${said.key ?? "none"}, place ${said.place ?? "none"}`,
      );
      if (database) lines.push(...storeLines(database, said, options.source));
      lines.push(...(options.fake?.(said) ?? []).map((line) => `  fake: ${line}`));
      const names = [said.key, said.place].filter((name): name is string => name !== undefined);
      for (const line of options.logs.split("\n")) {
        if (names.some((name) => line.includes(name))) lines.push(`  log: ${line}`);
      }
    }
  } finally {
    database?.close();
  }
  return lines;
}
