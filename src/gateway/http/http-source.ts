/** The HTTP API as a channel source (the page, the API's clients, `rudder send`). */
import type { ChannelSource, DeliveryMeta, SourceDelivery } from "../channel-source.js";
import type { MessageAttachment } from "../events.js";
import { GatewayClosedError } from "../routing/router.js";

type Deliver = (channelId: string, text: string, meta?: DeliveryMeta) => Promise<SourceDelivery>;

/** The HTTP API as a channel source: `POST /api/channels/:id/messages` delivers through it. */
export class HttpChannelSource implements ChannelSource {
  readonly name = "http";
  #deliver: Deliver | null = null;

  async start(deliver: Deliver): Promise<void> {
    this.#deliver = deliver;
  }

  async stop(): Promise<void> {
    this.#deliver = null;
  }

  /**
   * `source`: `http` (the page or the API), or `cli` for `rudder send`; `attachments`: the
   * posted files as the gateway's media handling saved them.
   */
  deliver(
    channelId: string,
    text: string,
    source = "http",
    attachments: readonly MessageAttachment[] = [],
  ): Promise<SourceDelivery> {
    if (!this.#deliver) {
      return Promise.reject(new GatewayClosedError("the gateway is not accepting messages now"));
    }
    return this.#deliver(channelId, text, {
      source,
      ...(attachments.length > 0 ? { attachments } : {}),
    });
  }
}
