/**
 * The outbox of files agents sent (`<data folder>/outbox/`): a copy of each, made when the turn
 * settles, so what reaches the chat is what the agent sent even when it deletes or overwrites the
 * file before the send (a retry, a restart). Each sent file has a copy of its own, named by its
 * SHA-256 and a random part (`<hash>.<uuid>`): two replies sending the same bytes do not share
 * one, so releasing the first leaves the second's. A copy is deleted once its ledger entry is sent
 * or given up. Without one (another worker's disk) the workspace's file is sent only while its
 * hash still matches (see `SentFiles.read`).
 */
import { createHash, randomUUID } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** The hex SHA-256 of some bytes: a sent file's check, and the first part of its copy's name. */
export function sha256Of(data: Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

export class SentFileCopies {
  readonly #folder: string;

  constructor(folder: string) {
    this.#folder = folder;
  }

  /**
   * Keeps a copy of `data` (written whole, then renamed into place); resolves to its hash and
   * the copy's name.
   */
  async keep(data: Buffer): Promise<{ sha256: string; copy: string }> {
    const sha256 = sha256Of(data);
    const copy = `${sha256}.${randomUUID()}`;
    await mkdir(this.#folder, { recursive: true, mode: 0o700 });
    const partial = join(this.#folder, `.${randomUUID()}`);
    await writeFile(partial, data, { mode: 0o600 });
    await rename(partial, join(this.#folder, copy));
    return { sha256, copy };
  }

  /** The copy's bytes, or undefined when there is none (or it no longer matches its hash). */
  async read(copy: string): Promise<Buffer | undefined> {
    const hash = hashOf(copy);
    if (hash === undefined) return undefined;
    const data = await readFile(join(this.#folder, copy)).catch(() => undefined);
    return data !== undefined && sha256Of(data) === hash ? data : undefined;
  }

  /** Deletes the copy (sent or given up); a missing one is fine. */
  async drop(copy: string): Promise<void> {
    if (hashOf(copy) === undefined) return;
    await rm(join(this.#folder, copy), { force: true });
  }
}

/** The hash a copy's name starts with; undefined for a name no copy has (`..`, a path). */
function hashOf(copy: string): string | undefined {
  return /^([0-9a-f]{64})\.[0-9a-f-]{36}$/.exec(copy)?.[1];
}
