/**
 * The shape of one scripted attack of `npm run redteam`, and the ground it runs on. A file in
 * `attacks/` exports `attacks: Attack[]`; the runner (run.ts) loads every such file, runs each
 * attack in turn and prints whether it held. An attack never throws for a wall that fell: it
 * returns `held: false` with what got through; a throw is reported as an attack that could not
 * be run (which fails the run as well).
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { join } from "node:path";

export interface AttackOutcome {
  /** True when the wall held: nothing the attack aimed at happened. */
  held: boolean;
  /** One line: what was tried and what was seen. */
  detail: string;
}

export interface Attack {
  /** Short and unique, e.g. `git: plant .git/commondir`. */
  name: string;
  /** Which wall it tries (the point): `files`, `privilege`, `network`, `secrets`, `gate`. */
  wall: string;
  /** Why it cannot run here (no bubblewrap, not root), or undefined to run it. */
  skip?: () => string | undefined;
  run(): Promise<AttackOutcome>;
}

export interface AttackGround {
  /** The workspace the agent works in. */
  workspace: string;
  /**
   * A home folder outside `/tmp` (under /var/tmp): the sandbox's private `/tmp` would hide
   * anything under the host's for the wrong reason.
   */
  home: string;
  /** A folder outside the workspace and `/tmp` where canaries are written and looked for. */
  canaries: string;
  cleanup(): void;
}

/** A fresh workspace, home and canary folder, all outside `/tmp`. */
export function attackGround(prefix = "rudder-redteam-"): AttackGround {
  const root = realpathSync(mkdtempSync(join("/var/tmp", prefix)));
  const workspace = join(root, "work");
  const home = join(root, "home");
  const canaries = join(root, "canaries");
  for (const folder of [workspace, home, canaries]) mkdirSync(folder);
  return {
    workspace,
    home,
    canaries,
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** Runs `body` on a fresh ground and removes it afterwards, whatever happens. */
export async function onGround<T>(body: (ground: AttackGround) => Promise<T>): Promise<T> {
  const ground = attackGround();
  try {
    return await body(ground);
  } finally {
    ground.cleanup();
  }
}
