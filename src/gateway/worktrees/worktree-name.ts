/**
 * The name of a channel's worktree: its folder's name and the last part of its branch
 * (`rudder/<name>`). A channel id (`[A-Za-z0-9._:-]`, see `CHANNEL_ID_PATTERN`) is kept as it is
 * when it is already a plain name (letters, digits, `_`, `-`, not starting with `-`); otherwise
 * each `:` and `.` becomes `-` and 8 hex digits of the id's SHA-256 are appended, so that
 * `web:a.b` and `web-a-b` never share a worktree. What remains is valid both as a folder name and
 * as one component of a git ref (no `..`, no leading `.`, no `.lock` ending, no `:`).
 */
import { createHash } from "node:crypto";

/** Where the worktree branches of the gateway's channels live. */
export const BRANCH_PREFIX = "rudder/";

export function worktreeName(channelId: string): string {
  if (/^[A-Za-z0-9_][A-Za-z0-9_-]*$/.test(channelId)) return channelId;
  const plain = channelId.replace(/[^A-Za-z0-9_-]/g, "-").replace(/^-+/, "");
  const digest = createHash("sha256").update(channelId).digest("hex").slice(0, 8);
  return plain === "" ? digest : `${plain}-${digest}`;
}

/** The branch a channel's worktree is on: `rudder/<worktreeName>`. */
export function worktreeBranch(channelId: string): string {
  return `${BRANCH_PREFIX}${worktreeName(channelId)}`;
}
