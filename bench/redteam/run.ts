/**
 * `npm run redteam`: every wall of the sandbox and the gate tried as an attacker would, each
 * attack a script (attacks/*.ts, each exporting `attacks: Attack[]`), through the real
 * bubblewrap. Prints one table of attacks tried and whether each held; exits 1 when any did
 * not hold or could not run. REDTEAM_ONLY=<part of a name> runs only the attacks whose name
 * (or wall) holds it.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Attack, AttackOutcome } from "./attack.js";

const only = process.env.REDTEAM_ONLY;

async function loadAttacks(): Promise<Attack[]> {
  const folder = join(import.meta.dirname, "attacks");
  const files = readdirSync(folder)
    .filter((name) => name.endsWith(".ts"))
    .sort();
  const attacks: Attack[] = [];
  for (const file of files) {
    const module = (await import(pathToFileURL(join(folder, file)).href)) as {
      attacks?: Attack[];
    };
    attacks.push(...(module.attacks ?? []));
  }
  return attacks.filter(
    (attack) => only === undefined || attack.name.includes(only) || attack.wall === only,
  );
}

type Row = { attack: Attack; verdict: "held" | "FELL" | "skipped" | "ERROR"; detail: string };

async function attempt(attack: Attack): Promise<Row> {
  const skipped = attack.skip?.();
  if (skipped !== undefined) return { attack, verdict: "skipped", detail: skipped };
  let outcome: AttackOutcome;
  try {
    outcome = await attack.run();
  } catch (error) {
    const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
    return { attack, verdict: "ERROR", detail: text.split("\n").slice(0, 3).join(" | ") };
  }
  return { attack, verdict: outcome.held ? "held" : "FELL", detail: outcome.detail };
}

function print(rows: Row[]): void {
  const nameWidth = Math.max(6, ...rows.map((row) => row.attack.name.length));
  const wallWidth = Math.max(4, ...rows.map((row) => row.attack.wall.length));
  const line = (wall: string, name: string, verdict: string, detail: string): string =>
    `${wall.padEnd(wallWidth)}  ${name.padEnd(nameWidth)}  ${verdict.padEnd(7)}  ${detail}`;
  console.log(line("wall", "attack", "verdict", "detail"));
  console.log(line("-".repeat(wallWidth), "-".repeat(nameWidth), "-------", "------"));
  for (const row of rows) {
    console.log(line(row.attack.wall, row.attack.name, row.verdict, row.detail));
  }
  const count = (verdict: Row["verdict"]): number =>
    rows.filter((row) => row.verdict === verdict).length;
  console.log(
    `\n${rows.length} attacks: ${count("held")} held, ${count("FELL")} fell, ` +
      `${count("ERROR")} could not run, ${count("skipped")} skipped (uid ${process.getuid?.()})`,
  );
}

const rows: Row[] = [];
for (const attack of await loadAttacks()) {
  const row = await attempt(attack);
  rows.push(row);
  process.stderr.write(`${row.verdict.padEnd(7)} ${attack.name}\n`);
}
print(rows);
process.exitCode = rows.some((row) => row.verdict === "FELL" || row.verdict === "ERROR") ? 1 : 0;
