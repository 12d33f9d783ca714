import { ANY_WORKER } from "../shared-store.js";
import type { NotifyListener } from "./notify-listener.js";

/** The NOTIFY channel every worker listens on; each wake-up names the worker it is for. */
export const WAKE_CHANNEL = "rudder_wake";

interface WakePayload {
  to: string;
  message: string;
}

/** The statement and values that wake `owner` for `messageId`. */
export function wakeNotification(owner: string, messageId: string): [string, unknown[]] {
  const payload: WakePayload = { to: owner, message: messageId };
  return ["SELECT pg_notify($1, $2)", [WAKE_CHANNEL, JSON.stringify(payload)]];
}

/**
 * One worker's wake-ups: the message ids other workers stored for it, or for any worker (see
 * NotifyListener).
 */
export function listenForWakeUps(
  notices: NotifyListener,
  worker: string,
  onWake: (messageId: string) => void,
  onReconnect: () => void,
): Promise<{ close(): Promise<void> }> {
  const onPayload = (text: string) => {
    try {
      const payload = JSON.parse(text) as WakePayload;
      const forUs = payload.to === worker || payload.to === ANY_WORKER;
      if (forUs && typeof payload.message === "string") onWake(payload.message);
    } catch {
      // Not ours to read; another rudder version's, perhaps.
    }
  };
  return notices.listen(WAKE_CHANNEL, onPayload, onReconnect);
}
