/**
 * The page's notice when it has no token the gateway takes: a link that did not work, a token
 * the gateway refused, or no link at all; each says how to get a fresh one (`rudder link`).
 */
import { byTestId } from "./dom.js";
import type { PageToken } from "./token.js";

export function showAuthNotice({ token, linkError }: PageToken): void {
  const notice = byTestId("auth-notice");
  const fresh =
    "Run `rudder link` for a fresh link (the one `rudder serve` printed works once, within 10 minutes).";
  notice.textContent = linkError
    ? `This link did not work: ${linkError}.${token ? "" : ` ${fresh}`}`
    : token
      ? `The gateway did not accept this page's token. ${fresh}`
      : `This page needs a link from the gateway (it ends in #code=...). ${fresh}`;
  notice.hidden = false;
}
