/**
 * `npm run redteam`: every wall of the sandbox and the gate tried as an attacker would, each
 * attack a script (attacks/*.ts, each exporting `attacks: Attack[]`), through the real
 * bubblewrap. Prints one table of attacks tried and whether each held; exits 1 when any did
 * not hold or could not run. REDTEAM_ONLY=<part of a name> runs only the attacks whose name
 * (or wall) holds it. Run as root, it then runs every attack again as an unprivileged user
 * (rudder-redteam, made by scripts/ensure-redteam-user.sh, through `runuser`) and prints that
 * table too: the walls must hold for both. REDTEAM_AS_ROOT_ONLY=1 skips the second run.
 */
import { execFileSync, spawn } from "node:child_process";
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

/**
 * This runner again as the unprivileged user, its table printed as it goes; its exit code, or
 * 1 when the user cannot be made or the run cannot start (said on stderr).
 */
function runAsUnprivilegedUser(): Promise<number> {
  const repository = join(import.meta.dirname, "..", "..");
  let user: string;
  try {
    user = execFileSync("bash", [join(repository, "scripts", "ensure-redteam-user.sh")], {
      encoding: "utf8",
    }).trim();
  } catch (error) {
    process.stderr.write(`redteam: no unprivileged user to run as: ${String(error)}\n`);
    return Promise.resolve(1);
  }
  console.log(`\n=== the same attacks as ${user} (unprivileged) ===`);
  const env = [`HOME=/var/lib/${user}`, `PATH=${process.env.PATH}`, "REDTEAM_AS_ROOT_ONLY=1"];
  if (only !== undefined) env.push(`REDTEAM_ONLY=${only}`);
  const script = join(import.meta.dirname, "run.ts");
  const child = spawn(
    "runuser",
    ["-u", user, "--", "env", ...env, process.execPath, "--import", "tsx", script],
    { cwd: repository, stdio: "inherit" },
  );
  return new Promise((resolve) => {
    child.on("error", (error) => {
      process.stderr.write(`redteam: runuser failed: ${error.message}\n`);
      resolve(1);
    });
    child.on("close", (code) => resolve(code ?? 1));
  });
}

const rows: Row[] = [];
const root = process.getuid?.() === 0;
if (root && process.env.REDTEAM_AS_ROOT_ONLY !== "1") console.log("=== as root ===");
for (const attack of await loadAttacks()) {
  const row = await attempt(attack);
  rows.push(row);
  process.stderr.write(`${row.verdict.padEnd(7)} ${attack.name}\n`);
}
print(rows);
let failed = rows.some((row) => row.verdict === "FELL" || row.verdict === "ERROR");
if (root && process.env.REDTEAM_AS_ROOT_ONLY !== "1") {
  failed = (await runAsUnprivilegedUser()) !== 0 || failed;
}
process.exitCode = failed ? 1 : 0;
