/**
 * The outbox of files agents sent (`<data folder>/outbox/`): a copy of each, named by its
 * SHA-256, made when the turn settles, so what reaches the chat is what the agent sent even when
 * it deletes or overwrites the file before the send (a retry, a restart). A copy is deleted once
 * its ledger entry is sent or given up. Without one (another worker's disk, a copy deleted for an
 * earlier reply that sent the same bytes) the workspace's file is sent only while its hash
 * still matches (see `SentFiles.read`).
 */
import { createHash, randomUUID } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** The hex SHA-256 of some bytes: a sent file's name in the outbox, and its check. */
export function sha256Of(data: Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

export class SentFileCopies {
  readonly #folder: string;

  constructor(folder: string) {
    this.#folder = folder;
  }

  /** Keeps a copy of `data` (written whole, then renamed into place); resolves to its hash. */
  async keep(data: Buffer): Promise<string> {
    const hash = sha256Of(data);
    await mkdir(this.#folder, { recursive: true, mode: 0o700 });
    const partial = join(this.#folder, `.${randomUUID()}`);
    await writeFile(partial, data, { mode: 0o600 });
    await rename(partial, join(this.#folder, hash));
    return hash;
  }

  /** The copy's bytes, or undefined when there is none (or it no longer matches its name). */
  async read(hash: string): Promise<Buffer | undefined> {
    if (!/^[0-9a-f]{64}$/.test(hash)) return undefined;
    const data = await readFile(join(this.#folder, hash)).catch(() => undefined);
    return data !== undefined && sha256Of(data) === hash ? data : undefined;
  }

  /** Deletes the copy (sent or given up); a missing one is fine. */
  async drop(hash: string): Promise<void> {
    if (!/^[0-9a-f]{64}$/.test(hash)) return;
    await rm(join(this.#folder, hash), { force: true });
  }
}
