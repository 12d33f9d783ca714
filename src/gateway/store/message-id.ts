import { randomFillSync } from "node:crypto";

/**
 * Message ids: UUIDs of version 7 (RFC 9562), whose first 48 bits are the time in
 * milliseconds, so ids made later sort later. A store's index on `id` then grows at its end,
 * where the last insert left it, instead of at a random page each time (a version 4 UUID): a
 * commit of many messages writes one page of that index instead of one page each, and the
 * index stays full. Within a millisecond, the 12 bits after the version count up from a
 * random start, so the ids of one process keep their order; a count that runs out borrows the
 * next millisecond.
 */
export function newMessageId(): string {
  let now = Date.now();
  if (now > last) {
    last = now;
    sequence = randomByte() & 0x7f;
  } else {
    now = last;
    sequence += 1;
    if (sequence > 0xfff) {
      last += 1;
      now = last;
      sequence = 0;
    }
  }
  const high = Math.floor(now / 2 ** 16);
  const low = now % 2 ** 16;
  let text = hex(high, 8);
  text += `-${hex(low, 4)}`;
  text += `-${hex(0x7000 | sequence, 4)}`;
  text += `-${hex(0x8000 | ((randomByte() & 0x3f) << 8) | randomByte(), 4)}`;
  text += "-";
  for (let index = 0; index < 6; index += 1) text += hex(randomByte(), 2);
  return text;
}

let last = 0;
let sequence = 0;

/** Random bytes drawn from a refilled pool: one call into the system per 256 bytes. */
const pool = Buffer.alloc(256);
let used = pool.length;

function randomByte(): number {
  if (used === pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  return pool[used++] as number;
}

function hex(value: number, digits: number): string {
  return value.toString(16).padStart(digits, "0");
}
