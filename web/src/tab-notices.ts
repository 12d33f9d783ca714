import type { GatewayEvent } from "./types.js";

/** How long a turn runs before its end is worth a notification; `rudder.longTurnMs` overrides. */
const LONG_TURN_MS = 10_000;

/**
 * Browser notifications while the tab is hidden: a permission request waiting for a decision,
 * or a long turn finished. Permission is asked once, on a click (browsers want a gesture);
 * without it, or while the tab is visible, nothing is shown.
 */
export class TabNotices {
  private started = 0;

  /** Asks for permission to notify, once (call it from a click or key press). */
  ask(): void {
    if (typeof Notification === "undefined" || Notification.permission !== "default") return;
    void Notification.requestPermission().catch(() => "denied");
  }

  see(event: GatewayEvent, channel: string): void {
    if (event.type === "turn_start") this.started = Date.now();
    if (!document.hidden) return;
    if (event.type === "permission_request") {
      this.show(`${channel}: the agent asks to use ${event.request.toolName}`, event.request.id);
    } else if (event.type === "turn_end") {
      const lasted = event.outcome.durationMs || Date.now() - this.started;
      if (lasted < longTurnMs()) return;
      const seconds = Math.round(lasted / 1000);
      this.show(
        event.outcome.isError
          ? `${channel}: the turn failed after ${seconds}s`
          : `${channel}: the turn finished after ${seconds}s`,
        `turn-${channel}`,
      );
    }
  }

  private show(title: string, tag: string): void {
    if (typeof Notification === "undefined" || Notification.permission !== "granted") return;
    try {
      const notice = new Notification(title, { tag, icon: "./icon.svg" });
      notice.onclick = () => {
        window.focus();
        notice.close();
      };
    } catch {
      // Some browsers allow notifications only from a service worker: then there are none.
    }
  }
}

function longTurnMs(): number {
  try {
    const value = Number(window.localStorage.getItem("rudder.longTurnMs"));
    return Number.isFinite(value) && value > 0 ? value : LONG_TURN_MS;
  } catch {
    return LONG_TURN_MS;
  }
}
