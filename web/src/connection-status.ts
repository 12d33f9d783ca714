/** The header's word for the live stream's state (`data-status` carries it for the style). */
import type { StreamStatus } from "./event-stream.js";

const labels: Record<StreamStatus, string> = {
  connecting: "connecting\u2026",
  open: "live",
  reconnecting: "reconnecting\u2026",
  closed: "disconnected",
};

export function showConnectionStatus(element: HTMLElement, status: StreamStatus): void {
  element.textContent = labels[status];
  element.dataset.status = status;
}
