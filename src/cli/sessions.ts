import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import { SessionCatalog, type SessionSummary } from "../agent/session-catalog.js";
import { sessionsDirectory, TranscriptStore } from "../agent/transcript-store.js";
import { booleanFlag, commandArgs, type ParsedArgs, stringFlag } from "./args.js";
import type { CommandIo } from "./command-io.js";
import {
  formatTime,
  formatTranscript,
  oneLine,
  printable,
  transcriptJson,
} from "./transcript-format.js";

export const SESSIONS_USAGE = `usage: rudder sessions [list] [--all | --cwd DIR] [--limit N] [--json]
       rudder sessions show <id> [--json]
       rudder sessions rm <id> [<id> ...]
       rudder sessions prune --older-than <duration> [--dry-run]
  Stored conversations, in $RUDDER_HOME/sessions (default ~/.rudder/sessions).
  list: this folder's sessions (or --cwd DIR's, or --all folders'), newest first.
  Carry one on with: rudder chat --resume <id>, or rudder run --resume <id> "<prompt>".
  prune: removes the transcripts of every folder not modified for <duration> (30d, 12h, 90m).`;

const FLAGS_OF = {
  list: ["all", "cwd", "json", "limit"],
  show: ["json"],
  rm: [],
  prune: ["older-than", "dry-run"],
} as const;

type Action = keyof typeof FLAGS_OF;

const PROMPT_WIDTH = 60;
const UNITS_MS: Record<string, number> = {
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/** `30d`, `12h`, `90m`, `45s`, `2w` in milliseconds; undefined for anything else or zero. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d+)([smhdw])$/.exec(text.trim());
  if (match === null) return undefined;
  const milliseconds = Number(match[1]) * (UNITS_MS[match[2] as string] as number);
  return milliseconds > 0 && Number.isSafeInteger(milliseconds) ? milliseconds : undefined;
}

function tildePath(path: string, env: NodeJS.ProcessEnv): string {
  const home = env.HOME?.trim();
  if (!home || home === "/") return path;
  if (path === home) return "~";
  return path.startsWith(`${home}/`) ? `~${path.slice(home.length)}` : path;
}

function summaryJson(summary: SessionSummary) {
  return {
    id: summary.id,
    cwd: summary.cwd,
    createdAt: summary.createdAt,
    updatedAt: summary.updatedAt.toISOString(),
    messages: summary.messages,
    compactions: summary.compactions,
    firstPrompt: summary.firstPrompt ?? null,
  };
}

function listLines(sessions: SessionSummary[], showFolder: boolean, env: NodeJS.ProcessEnv) {
  const rows = sessions.map((summary) => [
    summary.id,
    formatTime(summary.updatedAt),
    `${summary.messages} message${summary.messages === 1 ? "" : "s"}`,
    ...(showFolder ? [tildePath(printable(summary.cwd), env)] : []),
    summary.firstPrompt === undefined ? "(no prompt)" : oneLine(summary.firstPrompt, PROMPT_WIDTH),
  ]);
  const widths = (rows[0] ?? []).map((_, column) =>
    Math.max(...rows.map((row) => (row[column] as string).length)),
  );
  return rows.map(
    (row) =>
      `${row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] as number))).join("  ")}\n`,
  );
}

/** `rudder sessions [list|show|rm|prune]`: the stored conversations of this machine. */
export function sessionsCommandLine(argv: readonly string[], io: CommandIo): number {
  const args = commandArgs(
    "sessions",
    argv,
    {
      all: { type: "boolean" },
      cwd: { type: "string" },
      json: { type: "boolean" },
      limit: { type: "string" },
      "older-than": { type: "string" },
      "dry-run": { type: "boolean" },
    },
    SESSIONS_USAGE,
    io,
  );
  if (typeof args === "number") return args;
  const fail = (message: string): number => {
    io.stderr.write(`rudder sessions: ${message}\n${SESSIONS_USAGE}\n`);
    return 2;
  };
  const [first, ...ids] = args.positionals;
  const action = first ?? "list";
  if (!Object.hasOwn(FLAGS_OF, action)) return fail(`unknown subcommand "${action}"`);
  const allowed: readonly string[] = FLAGS_OF[action as Action];
  const stray = Object.keys(args.flags).find((name) => name !== "help" && !allowed.includes(name));
  if (stray !== undefined) return fail(`option --${stray} does not apply to ${action}`);

  const catalog = new SessionCatalog(new TranscriptStore(sessionsDirectory(io.env)));
  if (action === "list") {
    if (ids.length > 0) return fail(`list takes no arguments (got "${ids[0]}")`);
    return listSessions(catalog, args, io, fail);
  }
  if (action === "show") {
    if (ids.length !== 1) return fail("show needs exactly one session id");
    return showSession(catalog, ids[0] as string, booleanFlag(args, "json"), io);
  }
  if (action === "rm") {
    if (ids.length === 0) return fail("rm needs at least one session id");
    return removeSessions(catalog, ids, io);
  }
  if (ids.length > 0) return fail(`prune takes no session ids (got "${ids[0]}")`);
  const olderThan = stringFlag(args, "older-than");
  if (olderThan === undefined) return fail("prune needs --older-than <duration>, e.g. 30d");
  const olderThanMs = parseDuration(olderThan);
  if (olderThanMs === undefined) {
    return fail(
      `--older-than takes a whole number and s, m, h, d or w, like 30d, 12h or 90m (got "${olderThan}")`,
    );
  }
  return pruneSessions(catalog, olderThan.trim(), olderThanMs, booleanFlag(args, "dry-run"), io);
}

function removeSessions(catalog: SessionCatalog, ids: readonly string[], io: CommandIo): number {
  let failed = 0;
  for (const id of ids) {
    const outcome = catalog.remove(id);
    if (outcome.ok) {
      io.stdout.write(`removed ${id}\n`);
      continue;
    }
    failed++;
    let message: string;
    if (outcome.reason === "invalid-id") message = `Invalid session ID: ${id}`;
    else if (outcome.reason === "not-found")
      message = `No conversation found with session ID: ${id}`;
    else message = `cannot remove ${id}: ${outcome.problem}`;
    io.stderr.write(`rudder sessions rm: ${message}\n`);
  }
  return failed > 0 ? 1 : 0;
}

function pruneSessions(
  catalog: SessionCatalog,
  olderThan: string,
  olderThanMs: number,
  dryRun: boolean,
  io: CommandIo,
): number {
  const pruned = catalog.prune({ olderThanMs, dryRun });
  const verb = dryRun ? "would remove" : "removed";
  for (const session of pruned.removed) {
    const folder =
      session.cwd === undefined ? "(unreadable)" : tildePath(printable(session.cwd), io.env);
    io.stdout.write(`${verb} ${session.id}  ${formatTime(session.updatedAt)}  ${folder}\n`);
  }
  for (const session of pruned.failed) {
    io.stderr.write(`rudder sessions prune: cannot remove ${session.id}: ${session.problem}\n`);
  }
  if (pruned.removed.length === 0 && pruned.failed.length === 0) {
    io.stdout.write(`no sessions older than ${olderThan}\n`);
  }
  return pruned.failed.length > 0 ? 1 : 0;
}

function listSessions(
  catalog: SessionCatalog,
  args: ParsedArgs,
  io: CommandIo,
  fail: (message: string) => number,
): number {
  const all = booleanFlag(args, "all");
  const cwdFlag = stringFlag(args, "cwd");
  if (all && cwdFlag !== undefined) return fail("--all and --cwd do not go together");
  const limitText = stringFlag(args, "limit");
  const limit = limitText === undefined ? undefined : Number(limitText);
  if (limit !== undefined && !(Number.isSafeInteger(limit) && limit > 0)) {
    return fail(`--limit must be a positive whole number (got "${limitText}")`);
  }
  let cwd: string | undefined;
  if (!all) {
    try {
      cwd = realpathSync(resolve(cwdFlag ?? process.cwd()));
    } catch {
      return fail(`no such folder: ${cwdFlag ?? process.cwd()}`);
    }
  }
  const listing = catalog.list({
    ...(cwd === undefined ? {} : { cwd }),
    ...(limit === undefined ? {} : { limit }),
  });
  for (const unreadable of listing.unreadable) {
    io.stderr.write(`rudder sessions: skipped ${unreadable.id}: ${unreadable.problem}\n`);
  }
  if (booleanFlag(args, "json")) {
    io.stdout.write(`${JSON.stringify(listing.sessions.map(summaryJson), null, 2)}\n`);
    return 0;
  }
  if (listing.sessions.length === 0) {
    io.stdout.write(
      cwd === undefined
        ? "no stored sessions\n"
        : `no sessions started in ${tildePath(cwd, io.env)} (--all lists every folder's)\n`,
    );
    return 0;
  }
  for (const line of listLines(listing.sessions, all, io.env)) io.stdout.write(line);
  return 0;
}

function showSession(catalog: SessionCatalog, id: string, json: boolean, io: CommandIo): number {
  const lookup = catalog.read(id);
  if (!lookup.ok) {
    io.stderr.write(
      `rudder sessions show: ${
        lookup.reason === "not-found"
          ? `No conversation found with session ID: ${id}`
          : `cannot read session ${id}: ${lookup.problem}`
      }\n`,
    );
    return 1;
  }
  const { summary, segments } = lookup.transcript;
  io.stdout.write(
    json
      ? `${JSON.stringify(transcriptJson(segments), null, 2)}\n`
      : formatTranscript(summary, segments),
  );
  return 0;
}
