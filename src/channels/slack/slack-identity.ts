/**
 * Who the bot is and who people are: `auth.test` until it answers (the bot's user and team; a
 * refused token ends it), and people's names from `users.info`, remembered.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { WebClient } from "@slack/web-api";
import { type Backoff, backoffDelayMs } from "../kit/backoff.js";
import type { PlatformHandlers } from "../kit/chat-platform.js";
import type { SlackBot } from "./slack-events.js";
import { slackFailure } from "./slack-failure.js";

/** The bot, or undefined when the token was refused (`handlers.badToken` called) or stopped. */
export async function signIn(
  web: WebClient,
  handlers: PlatformHandlers,
  signal: AbortSignal,
  backoff: Backoff,
  redact: (text: string) => string,
): Promise<{ bot: SlackBot; name: string | undefined } | undefined> {
  for (let failures = 1; !signal.aborted; failures += 1) {
    try {
      const me = await web.auth.test();
      const name = me.user === undefined ? undefined : String(me.user);
      handlers.log(`slack: signed in as @${name ?? me.user_id} in ${me.team ?? me.team_id}`);
      return { bot: { userId: String(me.user_id), teamId: String(me.team_id) }, name };
    } catch (error) {
      const failure = slackFailure(error);
      if (failure.kind === "bad_token") {
        handlers.badToken(401);
        return undefined;
      }
      const retryAfter = failure.kind === "transient" ? failure.retryAfterMs : undefined;
      const delay = backoffDelayMs(failures, backoff, retryAfter);
      const reason = redact(error instanceof Error ? error.message : String(error));
      handlers.log(`slack: auth.test failed (${reason}); again in ${delay} ms`);
      await sleep(delay, undefined, { signal }).catch(() => undefined);
    }
  }
  return undefined;
}

export class SlackNames {
  readonly #names = new Map<string, string>();

  /** "Person (@name)", remembered; the id when Slack does not say (not remembered then). */
  async nameOf(web: WebClient, userId: string): Promise<string> {
    const known = this.#names.get(userId);
    if (known !== undefined) return known;
    try {
      const { user } = await web.users.info({ user: userId });
      const real = user?.real_name ?? user?.profile?.real_name;
      const handle = user?.name ? `@${user.name}` : "";
      const name = real && handle ? `${real} (${handle})` : real || handle || userId;
      this.#names.set(userId, name);
      return name;
    } catch {
      return userId;
    }
  }
}
