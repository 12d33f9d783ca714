/**
 * A number of bytes as people read it: `17 bytes`, `12.3 KiB`, `20 MiB`, `1.5 GiB` (powers of
 * 1024, as `RUDDER_ATTACHMENT_MAX_MB` and `--min-free-memory` count; one decimal, none when it
 * is 0). The one formatter for every message that names a size: the agent's tools, the
 * gateway's media and memory lines, the chat kit's answers, the page's sent files (web/ bundles
 * this module: it imports nothing and uses nothing of Node). It lives in `tools`, the lowest
 * layer among them (ARCHITECTURE.md lets `channels` import this module).
 */

const UNITS = ["KiB", "MiB", "GiB", "TiB"];

export function byteSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} ${bytes === 1 ? "byte" : "bytes"}`;
  let value = bytes / 1024;
  let unit = 0;
  while (Number(value.toFixed(1)) >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${Number(value.toFixed(1))} ${UNITS[unit]}`;
}
