/**
 * Random (version 4) UUIDs, as `crypto.randomUUID()` makes them, from the kernel's random
 * source read a block at a time. Not from node:crypto: loading that module (and the dozen of
 * its own it loads) costs a one-shot `rudder run` several milliseconds before its first model
 * request, for nothing else it needs there (bench/startup.ts). Where /dev/urandom cannot be
 * read, node:crypto makes them after all.
 */
import { closeSync, openSync, readSync } from "node:fs";
import { createRequire } from "node:module";

const BLOCK = 16 * 64;
let pool: Buffer = Buffer.alloc(0);
let offset = 0;

export function randomUUID(): string {
  if (offset + 16 > pool.length) {
    const fresh = readRandom(BLOCK);
    if (fresh === undefined) return fallback();
    pool = fresh;
    offset = 0;
  }
  const bytes = pool.subarray(offset, offset + 16);
  offset += 16;
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function readRandom(size: number): Buffer | undefined {
  let descriptor: number | undefined;
  try {
    descriptor = openSync("/dev/urandom", "r");
    const block = Buffer.alloc(size);
    let filled = 0;
    while (filled < size) {
      const read = readSync(descriptor, block, filled, size - filled, null);
      if (read <= 0) return undefined;
      filled += read;
    }
    return block;
  } catch {
    return undefined;
  } finally {
    if (descriptor !== undefined) closeSync(descriptor);
  }
}

function fallback(): string {
  const crypto = createRequire(import.meta.url)("node:crypto") as typeof import("node:crypto");
  return crypto.randomUUID();
}
