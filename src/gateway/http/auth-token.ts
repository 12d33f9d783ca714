import { randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { GatewayStore } from "../store/store.js";

/**
 * The gateway's bearer token: the whole content of `<dataDir>/token`, created
 * on first start as 32 random bytes in hex, mode 0600 (the data folder 0700).
 */
export function loadOrCreateToken(dataDir: string): string {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, "token");
  try {
    const existing = readFileSync(path, "utf8").trim();
    if (existing !== "") return existing;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const token = randomBytes(32).toString("hex");
  try {
    writeFileSync(path, `${token}\n`, { mode: 0o600, flag: "wx" });
  } catch (error) {
    // Another gateway on the same folder won the race; use its token.
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return readToken(dataDir);
    throw error;
  }
  chmodSync(path, 0o600);
  return token;
}

/**
 * The token this gateway accepts. With a store several workers share, the store's (the first
 * worker's), and `<dataDir>/token` is rewritten as its 0600 copy for `rudder send` and friends.
 */
export async function gatewayToken(dataDir: string, store: GatewayStore): Promise<string> {
  const local = loadOrCreateToken(dataDir);
  if (store.sharedToken === undefined) return local;
  const shared = await store.sharedToken(local);
  if (shared !== local) {
    const path = join(dataDir, "token");
    const staged = `${path}.${process.pid}.tmp`;
    writeFileSync(staged, `${shared}\n`, { mode: 0o600 });
    chmodSync(staged, 0o600);
    renameSync(staged, path);
  }
  return shared;
}

/** Reads an existing token (what `rudder send` and `rudder schedule` use). */
export function readToken(dataDir: string): string {
  return readFileSync(join(dataDir, "token"), "utf8").trim();
}

/** Constant-time comparison, so the token cannot be guessed byte by byte from timings. */
export function tokenMatches(expected: string, given: string | undefined): boolean {
  if (given === undefined) return false;
  const left = Buffer.from(expected);
  const right = Buffer.from(given);
  return left.length === right.length && timingSafeEqual(left, right);
}
