import type { SourceContext } from "../../gateway/channel-source.js";
import type {
  PermissionRequestInfo,
  PermissionResolver,
  PermissionVerdict,
} from "../../gateway/events.js";
import type { ChannelGrants } from "../../gateway/store/source-store.js";
import type { Button, ButtonPress, OutgoingChat } from "./chat-platform.js";
import type { ReplyOutbox } from "./reply-outbox.js";
import { requestDetail, toolVerb } from "./tool-summary.js";

/** The part of a request id people type: its first eight characters. */
export function shortId(requestId: string): string {
  return requestId.slice(0, 8);
}

interface Card {
  request: PermissionRequestInfo;
  entryId: string;
  platformId: string | null;
  delivered: Promise<string | null>;
}

/** Who decided through the chat, remembered until the request's `permission_resolved`. */
interface Decider {
  name: string;
  always: boolean;
}

/** A button's data: `pa:` allow once, `pA:` allow always, `pd:` deny, then the request id. */
const BUTTON_DATA = /^p([aAd]):([0-9a-f-]{8,40})$/;

function cardText(request: PermissionRequestInfo): string {
  const id = shortId(request.id);
  return [
    `Permission request ${id}: the agent wants to ${toolVerb(request.toolName)} (${request.toolName}):`,
    requestDetail(request.toolName, request.input),
    ...(request.description ? [`Reason: ${request.description}`] : []),
    "",
    `Press a button, or answer /allow ${id} or /deny ${id} [what to tell the agent]; a reply to this message denies it with your reply as the reason.`,
  ].join("\n");
}

function buttons(requestId: string): Button[][] {
  return [
    [
      { label: "Allow once", data: `pa:${requestId}` },
      { label: "Allow always here", data: `pA:${requestId}` },
    ],
    [{ label: "Deny", data: `pd:${requestId}` }],
  ];
}

function grantOf(request: PermissionRequestInfo): string | null {
  return toolVerb(request.toolName) === "run" && typeof request.input.command === "string"
    ? request.input.command
    : null;
}

/**
 * Permission requests as messages with buttons: Allow once, Allow always here (that exact
 * command, or that tool for files), Deny. A reply to the card denies with the reply as the
 * reason. When the request is settled (here, on the page, by the timeout, by the turn's end)
 * the card is edited to say who decided what, and its buttons go. The grants "Allow always
 * here" stores are the gateway's: it allows a request one covers before announcing it, so no
 * card is made for one (test/channels/kit/approval-grants.test.ts).
 */
export class ApprovalCards {
  readonly #cards = new Map<string, Card>();
  readonly #deciders = new Map<string, Decider>();
  readonly #outbox: ReplyOutbox;
  readonly #permissions: SourceContext["permissions"];
  readonly #grants: ChannelGrants;

  constructor(
    outbox: ReplyOutbox,
    permissions: SourceContext["permissions"],
    grants: ChannelGrants,
  ) {
    this.#outbox = outbox;
    this.#permissions = permissions;
    this.#grants = grants;
  }

  /** Remembers who is deciding `requestId` through the chat (a button, `/allow`). */
  deciding(requestId: string, name: string, always = false): void {
    this.#deciders.set(requestId, { name, always });
  }

  async announce(request: PermissionRequestInfo): Promise<void> {
    const message: OutgoingChat = {
      text: cardText(request),
      format: "plain",
      buttons: buttons(request.id),
    };
    const recorded = await this.#outbox.send(request.channelId, "approval", message);
    if (recorded === null) return;
    const card: Card = {
      request,
      entryId: recorded.id,
      platformId: null,
      delivered: recorded.delivered,
    };
    this.#cards.set(request.id, card);
    void recorded.delivered.then((platformId) => {
      card.platformId = platformId;
    });
  }

  /** Edits the card to its outcome. */
  async resolved(
    requestId: string,
    decision: PermissionVerdict,
    resolvedBy: PermissionResolver,
    message: string | undefined,
  ): Promise<void> {
    const card = this.#cards.get(requestId);
    const decider = this.#deciders.get(requestId);
    this.#cards.delete(requestId);
    this.#deciders.delete(requestId);
    if (card === undefined) return;
    const id = shortId(requestId);
    const who = decider?.name ?? (resolvedBy === "person" ? "someone on the page" : undefined);
    let outcome: string;
    if (decision === "allow") {
      outcome = `allowed ${decider?.always ? "always in this channel" : "once"}${who ? ` by ${who}` : ""}.`;
    } else if (resolvedBy === "timeout") outcome = "expired: nobody answered in time; denied.";
    else if (resolvedBy === "person")
      outcome = `denied${who ? ` by ${who}` : ""}${message ? `: ${message}` : "."}`;
    else outcome = `denied: ${message ?? "its turn ended."}`;
    const { request } = card;
    const text = [
      `Permission request ${id}: ${outcome}`,
      `${request.toolName}: ${requestDetail(request.toolName, request.input)}`,
    ].join("\n");
    await this.#outbox.edit(request.channelId, card.entryId, "approval", {
      text,
      format: "plain",
      buttons: [],
    });
  }

  /** A press of a card's button by someone allowed; the answer shown to the presser. */
  async press(press: ButtonPress): Promise<string | undefined> {
    const match = BUTTON_DATA.exec(press.data);
    if (!match) return "This button is no longer in use.";
    const [, action, requestId = ""] = match;
    const card = this.#cards.get(requestId);
    const verdict: PermissionVerdict = action === "d" ? "deny" : "allow";
    this.deciding(requestId, press.userName, action === "A");
    if (action === "A" && card !== undefined) {
      await this.#grants.add({
        channelId: press.channelId,
        toolName: card.request.toolName,
        command: grantOf(card.request),
        grantedBy: press.userName,
      });
    }
    const outcome = await this.#permissions.decide(press.channelId, requestId, verdict);
    if (outcome.status === "decided") return undefined;
    this.#deciders.delete(requestId);
    if (outcome.status === "already_decided")
      return `Already ${outcome.decision === "allow" ? "allowed" : "denied"}.`;
    return "This request is no longer waiting.";
  }

  /**
   * The request whose card `platformId` is (a reply to it gives a denial's reason). A card the
   * platform took but whose answer has not come back yet is waited for, a little.
   */
  async cardAt(channelId: string, platformId: string): Promise<string | undefined> {
    for (const [requestId, card] of this.#cards) {
      if (card.request.channelId !== channelId) continue;
      if (card.platformId === null) {
        const timer = new Promise<null>((resolve) => setTimeout(resolve, 2000, null).unref());
        card.platformId = await Promise.race([card.delivered, timer]);
      }
      if (card.platformId === platformId) return requestId;
    }
    return undefined;
  }
}
