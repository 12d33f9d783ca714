/**
 * Which stored "allow always in this channel" grant covers a tool call: the same tool, and for
 * Bash the exact same command (a grant of another tool covers every call of it). The chat
 * kit's cards and the page's both store grants of this shape (`ChannelGrants`).
 */
import type { ChannelGrant } from "../store/source-store.js";

/** What a grant of this call keeps: the exact command for Bash, null (any input) otherwise. */
export function grantCommand(toolName: string, input: Record<string, unknown>): string | null {
  return toolName.toLowerCase() === "bash" && typeof input.command === "string"
    ? input.command
    : null;
}

/** The first of `grants` covering the call, or undefined. */
export function grantCovering(
  grants: readonly ChannelGrant[],
  toolName: string,
  input: Record<string, unknown>,
): ChannelGrant | undefined {
  const command = grantCommand(toolName, input);
  return grants.find(
    (grant) => grant.toolName === toolName && (grant.command === null || grant.command === command),
  );
}
