/** A prompt that is a command to the session, as Claude Code accepts them: `/compact`, `/clear`. */
export type LocalCommand = { name: "compact"; focus?: string } | { name: "clear" };

/** The command `text` names, or undefined for an ordinary prompt. */
export function parseLocalCommand(text: string): LocalCommand | undefined {
  const match = /^\/(compact|clear)(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (match === null) return undefined;
  if (match[1] === "clear") return { name: "clear" };
  const focus = match[2]?.trim();
  return focus ? { name: "compact", focus } : { name: "compact" };
}
