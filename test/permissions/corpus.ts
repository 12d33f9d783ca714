import { readFileSync } from "node:fs";
import type { PermissionDecision } from "../../src/permissions/types.js";

export interface CorpusEntry {
  /** The expected verdict without the sandbox. */
  off: PermissionDecision;
  /** The expected verdict in the sandbox (the safe corpus: always allow). */
  on: PermissionDecision;
  /** The expected verdict in the sandbox when a person can answer (default: as `on`). */
  asking: PermissionDecision;
  /** The command, with `SCRATCH` standing for the scratch folder. */
  command: string;
  line: number;
}

/** Reads a corpus file: `<off> [<on> [<asking>]] | <command>` lines, `#` comments, `\n` for a newline. */
export function readCorpus(name: "bypasses" | "safe" | "gate"): CorpusEntry[] {
  const text = readFileSync(new URL(`./corpus/${name}.txt`, import.meta.url), "utf8");
  const entries: CorpusEntry[] = [];
  for (const [index, raw] of text.split("\n").entries()) {
    if (raw.trim() === "" || raw.startsWith("#")) continue;
    const bar = raw.indexOf(" | ");
    const verdicts = raw.slice(0, bar).split(" ") as PermissionDecision[];
    entries.push({
      off: verdicts[0]!,
      on: verdicts[1] ?? "allow",
      asking: verdicts[2] ?? verdicts[1] ?? "allow",
      command: raw.slice(bar + 3).replace(/\\n/g, "\n"),
      line: index + 1,
    });
  }
  return entries;
}
