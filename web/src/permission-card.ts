import { formatInput } from "./activity.js";
import { h, preview } from "./dom.js";
import type { PermissionRequestInfo, PermissionResolver, PermissionVerdict } from "./types.js";

/**
 * Sends a person's decision: null when the gateway took it, else its error, with `settled`
 * when the request was settled already (decided elsewhere, timed out, its turn ended).
 */
export type DecidePermission = (
  request: PermissionRequestInfo,
  decision: PermissionVerdict,
  /** With a denial: what the agent is told instead of the default text. */
  message: string | undefined,
  /** With an allowing: allow such calls in this channel from now on (a stored grant). */
  always: boolean,
) => Promise<{ error: string; settled: boolean } | null>;

interface Card {
  element: HTMLElement;
  note: HTMLInputElement;
  actions: HTMLElement;
  outcome: HTMLElement;
  buttons: HTMLButtonElement[];
  settled: boolean;
}

/** "wants to run: rm notes.txt", by what the tool does with its input. */
function wants(request: PermissionRequestInfo): string {
  const tool = request.toolName.toLowerCase();
  const verb =
    tool === "bash"
      ? "run"
      : /^(write|edit|multiedit|notebookedit)$/.test(tool)
        ? "change"
        : /^(read|glob|grep|ls)$/.test(tool)
          ? "read"
          : "use";
  return `wants to ${verb}:`;
}

function outcomeText(
  decision: PermissionVerdict,
  resolvedBy: PermissionResolver,
  message: string | undefined,
): string {
  if (decision === "allow") return "Allowed.";
  if (resolvedBy === "person") return message ? `Denied: ${message}` : "Denied.";
  return message ?? "Denied.";
}

/** What "Allow always" covers: the exact command for Bash, every call of another tool. */
function alwaysScope(request: PermissionRequestInfo): string {
  return request.toolName.toLowerCase() === "bash"
    ? "this exact command"
    : `every ${request.toolName} call`;
}

/**
 * The permission requests of a channel as compact cards in the conversation:
 * what the agent wants to do, with Allow, Allow always (in this channel) and Deny. A card shows its outcome
 * once the request is settled, here or elsewhere (another tab, the timeout,
 * the end of the turn).
 */
export class PermissionCards {
  private readonly cards = new Map<string, Card>();

  constructor(
    private readonly decide: DecidePermission,
    /** How many requests wait for a decision, after every change. */
    private readonly onPending: (count: number) => void,
  ) {}

  clear(): void {
    this.cards.clear();
    this.onPending(0);
  }

  /** A new card for the request; null when it is already shown. */
  show(request: PermissionRequestInfo): HTMLElement | null {
    if (this.cards.has(request.id)) return null;
    const command = formatInput(request.input);
    const headingId = `permission-${request.id}`;
    const allow = h(
      "button",
      {
        type: "button",
        class: "small",
        "data-testid": "permission-allow",
        "aria-label": `Allow ${request.toolName}: ${preview(command, 120)}`,
      },
      "Allow",
    );
    const always = h(
      "button",
      {
        type: "button",
        class: "small",
        "data-testid": "permission-allow-always",
        title: `Allow ${alwaysScope(request)} in this channel from now on`,
        "aria-label": `Allow always in this channel: ${request.toolName}: ${preview(command, 120)}`,
      },
      "Allow always",
    );
    const deny = h(
      "button",
      {
        type: "button",
        class: "small danger",
        "data-testid": "permission-deny",
        "aria-label": `Deny ${request.toolName}: ${preview(command, 120)}`,
      },
      "Deny",
    );
    const note = h("input", {
      type: "text",
      class: "permission-note",
      "data-testid": "permission-note",
      placeholder: "Why not? (optional, told to the agent on Deny)",
      "aria-label": `What to tell the agent when denying ${request.toolName}`,
      maxlength: "4000",
    });
    const actions = h("div", { class: "permission-actions" }, allow, always, deny, note);
    const outcome = h("p", {
      class: "permission-outcome",
      "data-testid": "permission-outcome",
      role: "status",
    });
    const element = h(
      "section",
      {
        class: "permission",
        "data-testid": "permission-request",
        "data-request-id": request.id,
        "data-state": "pending",
        role: "group",
        "aria-labelledby": headingId,
      },
      h(
        "p",
        { class: "permission-text", id: headingId },
        h("span", { class: "permission-tool" }, request.toolName),
        ` ${wants(request)} `,
        h("code", { class: "permission-command", title: command }, preview(command, 160)),
      ),
      request.description
        ? h("p", { class: "permission-reason" }, preview(request.description, 200))
        : null,
      actions,
      outcome,
    );
    const card: Card = {
      element,
      note,
      actions,
      outcome,
      buttons: [allow, always, deny],
      settled: false,
    };
    this.cards.set(request.id, card);
    allow.addEventListener("click", () => void this.send(request, card, "allow"));
    always.addEventListener("click", () => void this.send(request, card, "allow", true));
    deny.addEventListener("click", () => void this.send(request, card, "deny"));
    this.changed();
    return element;
  }

  /** Shows how the request ended; a card not shown (an older request) is ignored. */
  resolve(
    requestId: string,
    decision: PermissionVerdict,
    resolvedBy: PermissionResolver,
    message?: string,
  ): void {
    const card = this.cards.get(requestId);
    if (!card || card.settled) return;
    card.settled = true;
    card.element.dataset.state = decision === "allow" ? "allowed" : "denied";
    card.element.dataset.resolvedBy = resolvedBy;
    card.actions.remove();
    card.outcome.textContent = outcomeText(decision, resolvedBy, message);
    this.changed();
  }

  private changed(): void {
    let count = 0;
    for (const card of this.cards.values()) if (!card.settled) count += 1;
    this.onPending(count);
  }

  private async send(
    request: PermissionRequestInfo,
    card: Card,
    decision: PermissionVerdict,
    always = false,
  ): Promise<void> {
    for (const button of card.buttons) button.disabled = true;
    card.outcome.textContent = "";
    const note = card.note.value.trim();
    const message = decision === "deny" && note !== "" ? note : undefined;
    const failure = await this.decide(request, decision, message, always);
    if (failure === null) {
      this.resolve(request.id, decision, "person", message);
      if (always)
        card.outcome.textContent = `Allowed always in this channel (${alwaysScope(request)}).`;
      return;
    }
    if (card.settled) return;
    if (failure.settled) {
      card.settled = true;
      card.element.dataset.state = "expired";
      card.actions.remove();
      card.outcome.textContent = `Already settled: ${failure.error}`;
      this.changed();
      return;
    }
    card.outcome.textContent = `Not sent: ${failure.error}`;
    for (const button of card.buttons) button.disabled = false;
  }
}
