/**
 * On a phone the side panels fold away; the header's buttons open one over the conversation
 * (`data-panel` on the body), and each button's `aria-expanded` says which one is open.
 */
import { byTestId } from "./dom.js";

export function bindPanelToggles(): void {
  for (const [button, panel] of [
    ["toggle-channels", "channels"],
    ["toggle-side", "side"],
  ] as const) {
    const toggle = byTestId<HTMLButtonElement>(button);
    toggle.addEventListener("click", () => {
      const open = document.body.dataset.panel !== panel;
      if (open) document.body.dataset.panel = panel;
      else delete document.body.dataset.panel;
      for (const other of document.querySelectorAll<HTMLElement>(".panel-toggle")) {
        other.setAttribute("aria-expanded", String(open && other === toggle));
      }
    });
  }
}
