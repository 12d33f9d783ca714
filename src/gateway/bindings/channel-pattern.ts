/**
 * A binding's channel pattern: a channel id in which `*` matches any run of characters
 * (`telegram:*`, `web:billing-*`, `slack:T1:C2:*`); the whole id must match.
 */
export function channelPattern(pattern: string): RegExp {
  const parts = pattern.split("*").map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${parts.join(".*")}$`, "s");
}

/** Whether `channelId` matches `pattern`. */
export function matchesChannel(pattern: string, channelId: string): boolean {
  return channelPattern(pattern).test(channelId);
}
