import { homedir } from "node:os";
import { join } from "node:path";

/** Longest project folder name Claude Code uses as it is; a longer one is cut and hashed. */
const MAX_KEY_LENGTH = 200;
/** What Claude Code accepts as `CLAUDE_CODE_PROJECT_DIR_NAME` (not a reserved Windows name). */
const DIR_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const RESERVED = /^(?:con|prn|aux|nul|com[0-9]|lpt[0-9])$/i;

/** The 32-bit string hash Claude Code suffixes a cut folder name with, in base 36. */
function folderHash(text: string): string {
  let hash = 0;
  for (let index = 0; index < text.length; index++) {
    hash = (hash << 5) - hash + text.charCodeAt(index);
    hash |= 0;
  }
  return Math.abs(hash).toString(36);
}

/**
 * The folder under `<config>/projects/` where Claude Code keeps the sessions started in `cwd`:
 * `cwd` with every UTF-16 unit outside `[A-Za-z0-9]` turned into `-`; past 200 characters, the
 * first 200, `-`, and a hash of `cwd`. With `CLAUDE_CONFIG_DIR` set, a valid
 * `CLAUDE_CODE_PROJECT_DIR_NAME` names the folder instead. (As Claude Code 2.1.328 does.)
 */
export function claudeProjectFolder(cwd: string, env: NodeJS.ProcessEnv): string {
  const named = env.CLAUDE_CODE_PROJECT_DIR_NAME;
  if (env.CLAUDE_CONFIG_DIR && named && DIR_NAME.test(named) && !RESERVED.test(named)) {
    return named;
  }
  const key = cwd.replace(/[^a-zA-Z0-9]/g, "-");
  return key.length <= MAX_KEY_LENGTH ? key : `${key.slice(0, MAX_KEY_LENGTH)}-${folderHash(cwd)}`;
}

/** Claude Code's config folder: `CLAUDE_CONFIG_DIR`, else `~/.claude`. */
export function claudeConfigDirectory(env: NodeJS.ProcessEnv): string {
  return env.CLAUDE_CONFIG_DIR?.trim() || join(env.HOME?.trim() || homedir(), ".claude");
}

/**
 * The transcript Claude Code writes for a session run in `cwd` with the environment `env`, and
 * reads back on `--resume <sessionId>`: `<config>/projects/<folder>/<sessionId>.jsonl`.
 */
export function claudeSessionFile(env: NodeJS.ProcessEnv, cwd: string, sessionId: string): string {
  return join(
    claudeConfigDirectory(env),
    "projects",
    claudeProjectFolder(cwd, env),
    `${sessionId}.jsonl`,
  );
}
