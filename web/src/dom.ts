/** Attribute values; `false`, `null` and `undefined` leave the attribute out. */
export type Attributes = Record<string, string | number | boolean | null | undefined>;

export type Child = Node | string | null | undefined | false;

/**
 * Builds an element. Text always goes in as text nodes, never as HTML, so
 * anything the agent or a user wrote is shown, not interpreted.
 */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === false || value === null || value === undefined) continue;
    element.setAttribute(name, value === true ? "" : String(value));
  }
  append(element, ...children);
  return element;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
  }
}

/** The element with this `data-testid`; the page's skeleton guarantees it exists. */
export function byTestId<T extends HTMLElement = HTMLElement>(testId: string): T {
  const element = document.querySelector<T>(`[data-testid="${testId}"]`);
  if (!element) throw new Error(`page skeleton lacks [data-testid="${testId}"]`);
  return element;
}

/** Local time of day for a timestamp (ISO string or epoch ms); empty when unknown. */
export function clock(value: string | number | null | undefined): string {
  if (value === null || value === undefined || value === "") return "";
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return "";
  return date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

/** Date and time for a timestamp further away than today; empty when unknown. */
export function dateTime(value: string | number | null | undefined): string {
  if (value === null || value === undefined || value === "") return "";
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return "";
  return date.toLocaleString([], { dateStyle: "short", timeStyle: "short" });
}

/** Keeps a one-line preview short; the full text goes in an expandable body. */
export function preview(text: string, limit = 80): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > limit ? `${line.slice(0, limit - 1)}\u2026` : line;
}
