/**
 * The running gateway's address, kept in its data folder (`gateway-url`) so that the clients
 * (`rudder send`, `link`, ...) find a gateway started on another `--port` (or `--port 0`)
 * without `--url`. `rudder serve` writes it once it listens and removes it when it stops; a
 * gateway killed without stopping leaves it, and a client then says it cannot reach that
 * address, which is the truth.
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const FILE_NAME = "gateway-url";

/** The address the gateway of `dataDir` listens on, or undefined when none wrote one. */
export function readGatewayAddress(dataDir: string): string | undefined {
  try {
    const url = readFileSync(join(dataDir, FILE_NAME), "utf8").trim();
    return /^https?:\/\/\S+$/.test(url) ? url : undefined;
  } catch {
    return undefined;
  }
}

/** Records `url` as the address of the gateway of `dataDir` (whole, by rename). */
export function writeGatewayAddress(dataDir: string, url: string): void {
  const path = join(dataDir, FILE_NAME);
  const staged = `${path}.${process.pid}`;
  writeFileSync(staged, `${url}\n`, { mode: 0o600 });
  renameSync(staged, path);
}

/** Removes the record, unless another gateway on the same folder has written its own since. */
export function removeGatewayAddress(dataDir: string, url: string): void {
  if (readGatewayAddress(dataDir) === url) rmSync(join(dataDir, FILE_NAME), { force: true });
}
